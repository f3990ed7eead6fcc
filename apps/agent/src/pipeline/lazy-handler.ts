/**
 * A command handler whose module is imported when the first command of its kind arrives, so
 * that an idle agent does not hold what only running commands need (builds, archives, Compose
 * and YAML, dockerode). The registry needs the handler's head (kind, payload, slot) at once;
 * the head given here must be the loaded handler's, which is checked when it loads.
 */
import { commandKindToJSON } from '@skiff/proto';
import type { CommandHandler } from './handler.js';

export type HandlerHead = Pick<CommandHandler, 'kind' | 'payloadCase' | 'takesSlot'>;

export function lazyHandler(head: HandlerHead, load: () => Promise<CommandHandler>): CommandHandler {
  let loading: Promise<CommandHandler> | null = null;
  const handler = () =>
    (loading ??= load().then(
      (loaded) => {
        if (loaded.kind !== head.kind || loaded.payloadCase !== head.payloadCase || loaded.takesSlot !== head.takesSlot) {
          throw new Error(`the ${commandKindToJSON(head.kind)} handler loaded does not match the head it was registered with`);
        }
        return loaded;
      },
      (err: unknown) => {
        loading = null;
        throw err;
      },
    ));
  return {
    ...head,
    validate: async (command) => (await handler()).validate(command),
    run: async (context) => (await handler()).run(context),
    ended: async (command, outcome) => (await handler()).ended?.(command, outcome),
  };
}
