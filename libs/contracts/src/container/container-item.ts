import { z } from 'zod';

/** One container as `docker ps` shows it, with the labels that say which workload it belongs to. */
export const ContainerItem = z.object({
  containerId: z.string(),
  name: z.string(),
  image: z.string(),
  state: z.string().describe('created, running, paused, restarting, removing, exited or dead'),
  status: z.string().describe('The engine\'s words, e.g. "Up 5 minutes"'),
  created: z.string().describe('ISO time'),
  ports: z.array(z.object({ privatePort: z.number(), publicPort: z.number().nullable(), type: z.string(), ip: z.string().nullable() })),
  labels: z
    .record(z.string(), z.string())
    .describe('`skiff.*` (managed, kind, id) and the compose, stack and swarm labels naming its project, service, task and node'),
  serviceName: z.string().nullable().describe('A Swarm task: its service'),
  node: z.string().nullable().describe('A Swarm task: the id of its node'),
});
