import { z } from 'zod';

/** A node of a server's swarm, as the engine names it. */
export const NodeId = z.string().regex(/^[a-z0-9]{25}$/, 'must be a swarm node id (25 lowercase letters and digits)');

/** How a new machine joins a server's swarm. `token` is a secret of the swarm. */
export const JoinCommand = z.object({
  role: z.enum(['worker', 'manager']),
  token: z.string(),
  managerAddress: z.string(),
  command: z.string(),
});
