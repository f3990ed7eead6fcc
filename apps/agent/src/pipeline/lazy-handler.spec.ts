import { CommandKind, CommandStatus, type Command } from '@skiff/proto';
import { describe, expect, it } from 'vitest';
import { failed, succeeded, type CommandContext, type CommandHandler, type CommandOutcome } from './handler.js';
import { lazyHandler, type HandlerHead } from './lazy-handler.js';

const head: HandlerHead = { kind: CommandKind.COMMAND_KIND_STOP_WORKLOAD, payloadCase: 'stopWorkload', takesSlot: false };
const command = { commandId: 'c1', kind: head.kind } as Command;

function realHandler(seen: string[], overrides: Partial<CommandHandler> = {}): CommandHandler {
  return {
    ...head,
    validate: (c) => (seen.push(`validate ${c.commandId}`), 'refused'),
    run: async (ctx) => (seen.push(`run ${ctx.command.commandId}`), succeeded()),
    ended: async (c, outcome) => void seen.push(`ended ${c.commandId} ${outcome.status}`),
    ...overrides,
  };
}

describe('lazyHandler', () => {
  it('answers its head at once and loads the handler once, at its first use', async () => {
    const seen: string[] = [];
    let loads = 0;
    const handler = lazyHandler(head, async () => (loads++, realHandler(seen)));
    expect({ kind: handler.kind, payloadCase: handler.payloadCase, takesSlot: handler.takesSlot }).toEqual(head);
    expect(loads).toBe(0);

    expect(await handler.validate(command)).toBe('refused');
    expect(await handler.run({ command } as CommandContext)).toEqual(succeeded());
    const outcome: CommandOutcome = failed('gone');
    await handler.ended!(command, outcome);
    expect(seen).toEqual(['validate c1', 'run c1', `ended c1 ${CommandStatus.COMMAND_STATUS_FAILED}`]);
    expect(loads).toBe(1);
  });

  it('passes on a handler without `ended`', async () => {
    const handler = lazyHandler(head, async () => realHandler([], { ended: undefined }));
    await expect(handler.ended!(command, succeeded())).resolves.toBeUndefined();
  });

  it('refuses a loaded handler whose head differs from the registered one', async () => {
    const handler = lazyHandler(head, async () => realHandler([], { takesSlot: true }));
    await expect(handler.run({ command } as CommandContext)).rejects.toThrow(/COMMAND_KIND_STOP_WORKLOAD handler loaded does not match/);
  });

  it('loads again after a failed load', async () => {
    let loads = 0;
    const handler = lazyHandler(head, async () => {
      if (++loads === 1) throw new Error('import failed');
      return realHandler([]);
    });
    await expect(handler.validate(command)).rejects.toThrow('import failed');
    expect(await handler.validate(command)).toBe('refused');
    expect(loads).toBe(2);
  });
});
