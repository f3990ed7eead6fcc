import { z } from 'zod';
import { DomainRecord } from '../domain/record.js';
import { Timestamp } from '../primitives.js';
import { DeploymentRecord } from '../deployment/record.js';

/** A preview deployment: one per open pull request of an application, with its domains. */
export const PreviewDeploymentRecord = z.object({
  previewDeploymentId: z.string(),
  applicationId: z.string(),
  appName: z.string().describe('`preview-<appName>-<6 chars>`, the name of its workload'),
  branch: z.string(),
  pullRequestId: z.string(),
  pullRequestNumber: z.string(),
  pullRequestUrl: z.string(),
  pullRequestTitle: z.string(),
  previewStatus: z.string().describe('idle, running, done or error'),
  domains: z.array(DomainRecord),
  headCommit: z.string().nullable().describe("the pull request's head commit the preview was last deployed at"),
  deployments: z.array(DeploymentRecord).describe('its deployments, newest first, without logs (deployment.readLogs reads one)'),
  createdAt: Timestamp,
});
