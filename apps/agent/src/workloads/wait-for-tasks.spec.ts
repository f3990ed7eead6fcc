// The line a successful wait logs: a compose stack that runs is not logged as "the stack did
// not start: done" (the failure's words), but as running.
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { CommandStatus, type Command } from '@skiff/proto';
import { STACK_WAIT } from '../handlers/deploy-compose.js';
import { waitForTasks } from './workload-services.js';

function context() {
  const lines: { msg: string; level: number }[] = [];
  const sink = new Writable({ write: (chunk, _enc, next) => (lines.push(JSON.parse(String(chunk))), next()) });
  const log = pino({ level: 'info' }, sink);
  return { lines, context: { command: {} as Command, signal: new AbortController().signal, deadline: null, resumed: false, log, setPhase: () => {} } };
}

describe('waitForTasks', () => {
  it('logs a compose stack that runs as running, and keeps the failure’s words for a failure', async () => {
    const ok = context();
    const outcome = await waitForTasks(ok.context, { settleMs: 0 }, STACK_WAIT, async () => ({ phase: 'done', summary: 'web running' }));
    expect(outcome.status).toBe(CommandStatus.COMMAND_STATUS_SUCCEEDED);
    await new Promise((r) => setImmediate(r));
    expect(ok.lines.map((l) => l.msg)).toEqual(['the stack is running']);
    const bad = context();
    const failed = await waitForTasks(bad.context, { settleMs: 0 }, STACK_WAIT, async () => ({ phase: 'failed', reason: 'service web exited with code 3' }));
    expect(failed.reason).toBe('the stack did not start: service web exited with code 3');
  });
});
