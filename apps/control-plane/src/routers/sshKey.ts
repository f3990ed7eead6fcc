import type { RouterHandlers } from '../http/context.js';
import type { SshKeyService } from '../services/servers/index.js';

export const sshKeyHandlers = (keys: SshKeyService): RouterHandlers<'sshKey'> => ({
  create: (input, { principal }) => keys.create(principal, input),
  generate: (input, { principal }) => keys.generate(principal, input),
  one: (input, { principal }) => keys.one(principal, input.sshKeyId),
  all: (_input, { principal }) => keys.all(principal),
  update: (input, { principal }) => keys.update(principal, input),
  remove: (input, { principal }) => keys.remove(principal, input.sshKeyId),
});
