import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const mainTs = fileURLToPath(new URL('./main.ts', import.meta.url));

interface Agent {
  child: ChildProcess;
  lines: () => Array<Record<string, unknown>>;
  exited: Promise<number | null>;
}

function startAgent(env: Record<string, string>): Agent {
  const child = spawn(process.execPath, ['--import', 'tsx', mainTs], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const lines = () =>
    out
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { child, lines, exited };
}

async function waitFor(condition: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('agent main', () => {
  it('logs that it is a skeleton and exits 0 on SIGTERM', async () => {
    const agent = startAgent({
      SKIFF_SERVER_ID: 'srv_main_test',
      SKIFF_CONTROL_PLANE_GRPC: '127.0.0.1:1',
      SKIFF_NATS_URL: 'nats://agent:hunter2@127.0.0.1:1',
    });
    try {
      await waitFor(() => agent.lines().some((l) => String(l.msg).includes('skeleton')), 'the start log line');
      agent.child.kill('SIGTERM');
      expect(await agent.exited).toBe(0);
      const started = agent.lines().find((l) => String(l.msg).includes('skeleton'));
      expect(started).toMatchObject({ level: 30, serverId: 'srv_main_test' });
      expect(String(started?.msg)).toContain('commands arrive in a later version');
      expect(JSON.stringify(agent.lines())).not.toContain('hunter2');
    } finally {
      agent.child.kill('SIGKILL');
    }
  }, 30_000);

  it('exits 1 and names the missing variables when configuration is invalid', async () => {
    const agent = startAgent({});
    expect(await agent.exited).toBe(1);
    expect(agent.lines()).toContainEqual(
      expect.objectContaining({
        level: 60,
        msg: 'invalid configuration',
        issues: expect.arrayContaining(['SKIFF_SERVER_ID is required']),
      }),
    );
  }, 30_000);
});
