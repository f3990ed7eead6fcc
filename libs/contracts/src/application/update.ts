import { defineContract } from '../contract.js';
import { CLUSTER_DESCRIPTION } from './cluster.js';
import { ApplicationRecord } from './record.js';
import { ApplicationSettings } from './settings.js';

export const update = defineContract({
  method: 'POST',
  summary: 'Change any settings of an application',
  description:
    'Every field but `applicationId` is optional; only the fields given are changed. ' +
    '`applicationStatus` moves the application to that status. `watchPaths`, `previewLabels` ' +
    'and `args` are lists of strings, `icon` a string. ' +
    CLUSTER_DESCRIPTION,
  input: ApplicationSettings,
  output: ApplicationRecord,
  example: {
    applicationId: 'app_example',
    replicas: 2,
    memoryLimit: '536870912',
    autoDeploy: true,
    watchPaths: ['src/**', 'package.json'],
    healthCheckCluster: {
      Test: ['CMD-SHELL', 'curl -fs http://localhost:3000/health || exit 1'],
      Interval: 30_000_000_000,
      Timeout: 5_000_000_000,
      Retries: 3,
    },
    restartPolicyCluster: { Condition: 'on-failure', MaxAttempts: 5 },
    updateConfigCluster: { Parallelism: 1, Order: 'start-first', FailureAction: 'rollback' },
    modeCluster: { Replicated: { Replicas: 2 } },
    endpointSpecCluster: {
      Ports: [{ TargetPort: 3000, PublishedPort: 8080, PublishMode: 'host' }],
    },
    stopGracePeriodCluster: 10_000_000_000,
  },
});
