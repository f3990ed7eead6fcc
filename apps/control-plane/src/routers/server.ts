import type { RouterHandlers } from '../http/context.js';
import type { ServerService } from '../services/servers/index.js';

export const serverHandlers = (servers: ServerService): RouterHandlers<'server'> => ({
  create: (input, { principal }) => servers.create(principal, input),
  one: (input, { principal }) => servers.one(principal, input.serverId),
  all: (_input, { principal }) => servers.all(principal),
  update: (input, { principal }) => servers.update(principal, input),
  remove: (input, { principal }) => servers.remove(principal, input.serverId, input.workloads),
  regenerateJoinToken: (input, { principal }) => servers.regenerateJoinToken(principal, input.serverId),
});
