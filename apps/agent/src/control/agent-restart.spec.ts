import { pino } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { CommandControl, type CommandControlDeps } from './command-control.js';

/** Only the restart is exercised: the pipeline parts are not reached. */
function control(restart?: CommandControlDeps['restart']) {
  return new CommandControl({ log: pino({ level: 'silent' }), restart } as unknown as CommandControlDeps);
}

const ask = (c: CommandControl, version: string, checkOnly = false, bundleSha256 = '') =>
  c.handle({ request: { $case: 'agentRestart', value: { version, checkOnly, bundleSha256, bundleSize: '10' } } });

describe('AgentRestart (settings.updateServer)', () => {
  it('answers its version and stays when the version matches or only a check is asked', async () => {
    vi.useFakeTimers();
    try {
      const begin = vi.fn();
      const c = control({ version: '1.2.0', begin });
      expect(await ask(c, '1.2.0')).toEqual({ commandIds: [], error: '', agentRestart: { version: '1.2.0', restarting: false } });
      expect(await ask(c, '1.3.0', true)).toEqual({ commandIds: [], error: '', agentRestart: { version: '1.2.0', restarting: false } });
      vi.advanceTimersByTime(1_000);
      expect(begin).not.toHaveBeenCalled();
    } finally {
      vi.useRealTimers();
    }
  });

  it('on another version answers first, then begins its restart once; later checks say it is restarting', async () => {
    vi.useFakeTimers();
    try {
      const begin = vi.fn();
      const c = control({ version: '1.2.0', begin });
      expect(await ask(c, '1.3.0')).toEqual({ commandIds: [], error: '', agentRestart: { version: '1.2.0', restarting: true } });
      expect(begin).not.toHaveBeenCalled();
      expect((await ask(c, '1.3.0')).agentRestart).toEqual({ version: '1.2.0', restarting: true });
      expect((await ask(c, '1.3.0', true)).agentRestart).toEqual({ version: '1.2.0', restarting: true });
      vi.advanceTimersByTime(1_000);
      expect(begin).toHaveBeenCalledTimes(1);
    } finally {
      vi.useRealTimers();
    }
  });

  it('is refused by an agent that cannot restart', async () => {
    expect((await ask(control(), '1.3.0')).error).toBe('this agent cannot be restarted remotely');
  });

  it('installs the offered program before it restarts, and stays (saying why) when that fails', async () => {
    vi.useFakeTimers();
    try {
      const begin = vi.fn();
      const installed: unknown[] = [];
      let fail = true;
      const c = control({
        version: '1.2.0',
        begin,
        install: async (bundle) => {
          if (fail) throw new Error('the control plane offers no agent program');
          installed.push(bundle);
        },
      });
      const sha = 'a'.repeat(64);
      const refused = await ask(c, '1.3.0', false, sha);
      expect(refused.error).toBe(`could not install the agent program ${sha}: the control plane offers no agent program`);
      vi.advanceTimersByTime(1_000);
      expect(begin).not.toHaveBeenCalled();
      fail = false;
      expect((await ask(c, '1.3.0', false, sha)).agentRestart).toEqual({ version: '1.2.0', restarting: true });
      expect(installed).toEqual([{ sha256: sha, size: 10 }]);
      vi.advanceTimersByTime(1_000);
      expect(begin).toHaveBeenCalledTimes(1);
    } finally {
      vi.useRealTimers();
    }
  });
});
