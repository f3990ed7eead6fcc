import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import {
  Command,
  CommandKind,
  DeploymentEvent,
  DeploymentStatus,
  WorkloadKind,
  timestampFromDate,
  timestampToDate,
} from './index.js';

const run = promisify(execFile);
const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const buf = join(repoRoot, 'node_modules/.bin/buf');
const checkedInGen = join(repoRoot, 'libs/proto/src/gen');

function aCommand(overrides: Partial<Command> = {}): Command {
  return Command.fromPartial({
    commandId: 'cmd_01HZY3',
    serverId: 'srv_local',
    kind: CommandKind.COMMAND_KIND_DEPLOY_APPLICATION,
    workloadKey: 'application:app_7Qx',
    deadline: timestampFromDate(new Date('2030-01-02T03:04:05.678Z')),
    createdAt: timestampFromDate(new Date('2030-01-02T03:00:00.000Z')),
    payload: {
      $case: 'deployApplication',
      value: {
        deploymentId: 'dep_9',
        workload: { kind: WorkloadKind.WORKLOAD_KIND_APPLICATION, id: 'app_7Qx', appName: 'web-3f9a' },
        image: 'registry.local:5000/web:1',
        env: { PORT: '3000', GREETING: 'héllo ✓' },
        replicas: 2,
        forcePull: true,
      },
    },
    ...overrides,
  });
}

async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)))
    .sort();
}

describe('Command envelope', () => {
  it('round-trips through the binary encoding', () => {
    const command = aCommand();
    const bytes = Command.encode(command).finish();
    expect(Command.decode(bytes)).toEqual(command);
  });

  it('round-trips every payload case', () => {
    const workload = { kind: WorkloadKind.WORKLOAD_KIND_COMPOSE, id: 'cmp_1', appName: 'stack-a1' };
    const payloads: Command['payload'][] = [
      { $case: 'stopWorkload', value: { workload } },
      { $case: 'startWorkload', value: { workload } },
      { $case: 'removeWorkload', value: { workload, removeVolumes: true } },
    ];
    for (const payload of payloads) {
      const command = aCommand({ payload });
      expect(Command.decode(Command.encode(command).finish())).toEqual(command);
    }
  });

  it('keeps the envelope readable when the payload is of a newer kind', () => {
    const known = Command.encode(aCommand({ kind: 99 as CommandKind, payload: undefined })).finish();
    // Field 30, wire type 2 (length-delimited), length 1, one byte: a payload this
    // version does not know.
    const withUnknownPayload = new Uint8Array([...known, 0xf2, 0x01, 0x01, 0x00]);
    const decoded = Command.decode(withUnknownPayload);
    expect(decoded.commandId).toBe('cmd_01HZY3');
    expect(decoded.kind).toBe(99);
    expect(decoded.payload).toBeUndefined();
  });

  it('carries 64-bit integers as decimal strings', () => {
    const event = DeploymentEvent.fromPartial({
      deploymentId: 'dep_9',
      sequence: '9007199254740993', // 2^53 + 1: not representable as a number
      status: DeploymentStatus.DEPLOYMENT_STATUS_DONE,
      logLines: [{ time: timestampFromDate(new Date(0)), text: 'done' }],
    });
    expect(DeploymentEvent.decode(DeploymentEvent.encode(event).finish()).sequence).toBe('9007199254740993');
  });
});

describe('timestamps', () => {
  it('convert to and from Date with millisecond precision', () => {
    for (const iso of ['2030-01-02T03:04:05.678Z', '1969-12-31T23:59:59.001Z', '1970-01-01T00:00:00.000Z']) {
      const ts = timestampFromDate(new Date(iso));
      expect(ts.nanos).toBeGreaterThanOrEqual(0);
      expect(ts.nanos).toBeLessThan(1_000_000_000);
      expect(timestampToDate(ts).toISOString()).toBe(iso);
    }
    expect(timestampFromDate(new Date('1969-12-31T23:59:59.001Z'))).toEqual({ seconds: '-1', nanos: 1_000_000 });
  });

  it('reject invalid values', () => {
    expect(() => timestampFromDate(new Date(Number.NaN))).toThrow(RangeError);
    expect(() => timestampToDate({ seconds: 'soon', nanos: 0 })).toThrow(RangeError);
  });
});

describe('generated code', () => {
  it('passes buf lint (package layout, *_UNSPECIFIED enum zero values, naming)', async () => {
    await run(buf, ['lint'], { cwd: repoRoot });
  }, 60_000);

  it('is current: a fresh `buf generate` equals libs/proto/src/gen byte for byte', async () => {
    const out = await mkdtemp(join(tmpdir(), 'skiff-proto-gen-'));
    try {
      // --output prefixes the template's `out` (libs/proto/src/gen) with the temp dir.
      await run(buf, ['generate', '--output', out], { cwd: repoRoot });
      const freshGen = join(out, 'libs/proto/src/gen');
      const fresh = await listFiles(freshGen);
      const checkedIn = await listFiles(checkedInGen);
      const hint = 'libs/proto/src/gen is stale: run `npm run gen:proto` and commit the result';
      expect(fresh.length, hint).toBeGreaterThan(0);
      expect(checkedIn, hint).toEqual(fresh);
      for (const file of fresh) {
        const [want, got] = await Promise.all([readFile(join(freshGen, file)), readFile(join(checkedInGen, file))]);
        expect(got.equals(want), `${hint} (${file} differs)`).toBe(true);
      }
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  }, 60_000);
});
