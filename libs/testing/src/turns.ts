/**
 * One test file at a time among those that share the machine (tools/test-groups.ts), while
 * the others run beside them. The run's global setup serves the turns over a Unix socket;
 * each such file takes its turn before it is imported and gives it back after its last hook,
 * or when its process ends, whatever happened. Turns are given in the order they are asked.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { type Socket, connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const GO = 'go\n';

export interface TurnServer {
  path: string;
  close(): Promise<void>;
}

export async function startTurnServer(): Promise<TurnServer> {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-turns-'));
  const path = join(dir, 'turns.sock');
  const waiting: Socket[] = [];
  const sockets = new Set<Socket>();
  let holder: Socket | null = null;
  const next = () => {
    while (holder === null && waiting.length > 0) {
      const socket = waiting.shift()!;
      if (socket.destroyed) continue;
      holder = socket;
      socket.write(GO);
    }
  };
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => socket.destroy());
    socket.on('close', () => {
      sockets.delete(socket);
      const queued = waiting.indexOf(socket);
      if (queued >= 0) waiting.splice(queued, 1);
      if (holder === socket) {
        holder = null;
        next();
      }
    });
    waiting.push(socket);
    next();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, resolve);
  });
  return {
    path,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Waits for this process's turn; `end()` gives it back. */
export async function takeTurn(path: string): Promise<{ end(): void }> {
  const socket = connect(path);
  await new Promise<void>((resolve, reject) => {
    let got = '';
    socket.once('error', reject);
    socket.once('close', () => reject(new Error(`the turn server at ${path} closed before this file's turn`)));
    socket.on('data', (chunk) => {
      got += chunk.toString('utf8');
      if (got.startsWith(GO)) resolve();
    });
  });
  socket.removeAllListeners('close');
  socket.on('error', () => {});
  // Held until released, but it does not keep the process alive by itself.
  socket.unref();
  return { end: () => socket.destroy() };
}
