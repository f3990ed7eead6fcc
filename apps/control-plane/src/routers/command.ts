import type { RouterHandlers } from '../http/context.js';
import type { CommandService } from '../services/deployments/index.js';

export const commandHandlers = (commands: CommandService): RouterHandlers<'command'> => ({
  one: (input, { principal }) => commands.one(principal, input.commandId),
});
