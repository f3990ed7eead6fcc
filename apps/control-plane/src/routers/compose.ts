import type { RouterHandlers } from '../http/context.js';
import type { ComposeService } from '../services/compose.js';

/**
 * The record operations of compose stacks. Compose rewrites and templates come with their own
 * issue; deploy, start, stop and the other workload operations need the agent: until then
 * they have no handler and answer NOT_IMPLEMENTED.
 */
export const composeHandlers = (stacks: ComposeService): RouterHandlers<'compose'> => ({
  create: (input, { principal }) => stacks.create(principal, input),
  one: (input, { principal }) => stacks.one(principal, input.composeId),
  update: (input, { principal }) => stacks.update(principal, input),
  delete: (input, { principal }) => stacks.delete(principal, input.composeId, input.deleteVolumes),
  move: (input, { principal }) => stacks.move(principal, input.composeId, input.targetEnvironmentId),
  refreshToken: (input, { principal }) => stacks.refreshToken(principal, input.composeId),
  disconnectGitProvider: (input, { principal }) => stacks.disconnectGitProvider(principal, input.composeId),
});
