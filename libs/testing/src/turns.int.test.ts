import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TurnServer, startTurnServer, takeTurn } from './turns.js';

let server: TurnServer;
beforeAll(async () => {
  server = await startTurnServer();
});
afterAll(() => server.close());

const settled = (p: Promise<unknown>) => Promise.race([p.then(() => true), new Promise((r) => setTimeout(() => r(false), 200))]);

describe('turns', () => {
  it('gives one turn at a time, in the order they are asked', async () => {
    const first = await takeTurn(server.path);
    const order: string[] = [];
    const second = takeTurn(server.path).then((t) => (order.push('second'), t));
    await new Promise((r) => setTimeout(r, 50));
    const third = takeTurn(server.path).then((t) => (order.push('third'), t));
    expect(await settled(second)).toBe(false);
    first.end();
    (await second).end();
    (await third).end();
    expect(order).toEqual(['second', 'third']);
  });

  it('gives the turn on when the process holding it ends without giving it back', async () => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', '-e', `import('${new URL('./turns.ts', import.meta.url).pathname}').then(async (m) => { await m.takeTurn(${JSON.stringify(server.path)}); console.log('held'); setInterval(() => {}, 1000); })`],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    await new Promise<void>((resolve) => child.stdout!.on('data', (c: Buffer) => c.toString().includes('held') && resolve()));
    const next = takeTurn(server.path);
    expect(await settled(next)).toBe(false);
    child.kill('SIGKILL');
    (await next).end();
  });
});
