/**
 * installAgentBundle over real gRPC: a server speaking AgentArtifacts.FetchAgentBundle (as the
 * control plane's artifact server does) offers a program by its SHA-256; the agent's own
 * program file is replaced only by exactly the program announced.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Server, ServerCredentials, status } from '@grpc/grpc-js';
import { AgentArtifactsService, type AgentArtifactsServer } from '@skiff/proto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ArtifactClient } from './artifacts.js';
import { installAgentBundle } from './bundle-install.js';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const credential = `cred-${randomBytes(8).toString('hex')}`;
const offered = Buffer.from(`// agent 9.9.9 ${randomBytes(4000).toString('hex')}\n`);
let served = offered;
let server: Server;
let client: ArtifactClient;

beforeAll(async () => {
  server = new Server();
  const impl: AgentArtifactsServer = {
    fetchArchive: (call) => call.emit('error', { code: status.UNIMPLEMENTED, details: 'not here' }),
    fetchAgentBundle: (call) => {
      if (call.metadata.get('authorization')[0] !== `Bearer ${credential}`) {
        call.emit('error', { code: status.UNAUTHENTICATED, details: 'unknown server credential' });
        return;
      }
      if (call.request.sha256 !== sha(offered)) {
        call.emit('error', { code: status.NOT_FOUND, details: 'no such program' });
        return;
      }
      for (let at = 0; at < served.length; at += 1000) call.write({ data: served.subarray(at, at + 1000) });
      call.end();
    },
  };
  server.addService(AgentArtifactsService, impl);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  client = new ArtifactClient({ target: `127.0.0.1:${port}`, credential, attempts: 1 });
});
afterAll(() => {
  client?.close();
  server?.forceShutdown();
});

const madeDirs: string[] = [];
afterEach(() => {
  for (const dir of madeDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function ownProgram() {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-self-'));
  madeDirs.push(dir);
  const path = join(dir, 'skiff-agent.mjs');
  writeFileSync(path, '// agent 0.1.0\n', { mode: 0o750 });
  return { dir, path };
}

describe('installAgentBundle', () => {
  it('replaces the program file with the one announced, keeping its mode and leaving nothing beside it', async () => {
    served = offered;
    const self = ownProgram();
    await installAgentBundle(client, self.path, { sha256: sha(offered), size: offered.length });
    expect(readFileSync(self.path).equals(offered)).toBe(true);
    expect(statSync(self.path).mode & 0o777).toBe(0o750);
    expect(readdirSync(self.dir)).toEqual(['skiff-agent.mjs']);
  });

  it('keeps the old program when the control plane does not offer that digest, or sends something else', async () => {
    const self = ownProgram();
    await expect(installAgentBundle(client, self.path, { sha256: 'b'.repeat(64), size: 10 })).rejects.toThrow(/no agent program/);
    // Altered on the way: longer than announced, or another content of the announced size.
    served = Buffer.concat([offered, Buffer.from('evil')]);
    await expect(installAgentBundle(client, self.path, { sha256: sha(offered), size: offered.length })).rejects.toThrow(/larger than/);
    served = Buffer.from(offered.toString().replace('agent 9.9.9', 'agent 6.6.6'));
    await expect(installAgentBundle(client, self.path, { sha256: sha(offered), size: offered.length })).rejects.toThrow(/not the one announced/);
    await expect(installAgentBundle(client, self.path, { sha256: 'not-hex', size: 1 })).rejects.toThrow(/not a SHA-256/);
    expect(readFileSync(self.path, 'utf8')).toBe('// agent 0.1.0\n');
    expect(readdirSync(self.dir)).toEqual(['skiff-agent.mjs']);
  });
});
