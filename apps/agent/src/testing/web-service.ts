import { PLATFORM_NETWORK } from '@skiff/domain';
import type { DockerDriver } from '../docker/driver.js';

/** A Skiff-managed busybox httpd service `name` on the platform network, serving `page` on port 8080 (dnsrr). */
export async function startWebService(driver: DockerDriver, name: string, page: string): Promise<void> {
  await driver.ensureSwarm();
  await driver.ensureNetwork(PLATFORM_NETWORK);
  await driver.createOrUpdateService({
    Name: name,
    Labels: { 'skiff.managed': 'true' },
    TaskTemplate: {
      ContainerSpec: {
        Image: 'busybox:latest',
        Env: [`PAGE=${page}`],
        Command: ['sh', '-c', 'mkdir -p /www && echo "$PAGE" > /www/index.html && exec httpd -f -p 8080 -h /www'],
      },
      Networks: [{ Target: PLATFORM_NETWORK }],
    },
    Mode: { Replicated: { Replicas: 1 } },
    EndpointSpec: { Mode: 'dnsrr' },
  });
}
