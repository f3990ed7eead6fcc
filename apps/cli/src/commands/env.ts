import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { flagOn, onlyFlags, stringFlag } from '../args.js';
import type { Client } from '../client.js';
import { diffDotenv } from '../dotenv.js';
import { usage } from '../errors.js';
import { paint } from '../output.js';
import type { Session } from '../session.js';
import { type Workload, findWorkload, op } from '../workloads.js';
import { trimTrailing } from '../text.js';

const ONE = { application: 'application.one', compose: 'compose.one', cache: 'cache.one' } as const;
const ID = { application: 'applicationId', compose: 'composeId', cache: 'cacheId' } as const;

type Kind = keyof typeof ONE;

export async function readEnv(client: Client, w: Workload & { type: Kind }): Promise<string> {
  const record = await client.call<{ env: string | null }>(op(ONE[w.type]), { [ID[w.type]]: w.id });
  return record.env ?? '';
}

export async function writeEnv(client: Client, w: Workload & { type: Kind }, env: string): Promise<void> {
  if (w.type === 'cache') await client.call(op('cache.saveEnvironment'), { cacheId: w.id, env });
  else await client.call(op(`${w.type}.update`), { [ID[w.type]]: w.id, env });
}

/** `skiff env pull <workload> [--file .env]` and `skiff env push <workload> [--file .env] [--dry-run]`. */
export async function env(s: Session): Promise<void> {
  onlyFlags(s.args, ['json', 'help', 'context', 'file', 'dry-run'], 'env');
  const [sub, ref, ...extra] = s.args.positionals;
  if ((sub !== 'pull' && sub !== 'push') || !ref || extra.length) throw usage('usage: skiff env pull|push <workload> [--file .env] [--dry-run]');
  const file = stringFlag(s.args, 'file') ?? '.env';
  const client = s.client();
  const w = (await findWorkload(client, ref, ['application', 'compose', 'cache'])) as Workload & { type: Kind };
  const current = await readEnv(client, w);
  if (sub === 'pull') {
    const text = current && !current.endsWith('\n') ? `${current}\n` : current;
    if (file === '-') s.io.out(text);
    else {
      writeFileSync(file, text, { mode: 0o600 });
      // The mode above applies to a new file only: one that was there keeps the values as private.
      chmodSync(file, 0o600);
      s.io.err(`Wrote ${w.name}'s environment to ${file}\n`);
    }
    return;
  }
  let next: string;
  try {
    next = file === '-' ? s.readStdin() : readFileSync(file, 'utf8');
  } catch (err) {
    throw usage(`file: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  next = trimTrailing(next, '\n');
  const changes = diffDotenv(current, next);
  const dryRun = flagOn(s.args, 'dry-run');
  if (s.json) s.io.out(`${JSON.stringify({ workload: w.id, dryRun, changes })}\n`);
  else {
    const mark = { added: paint(s.io, 'green', '+'), changed: paint(s.io, 'yellow', '~'), removed: paint(s.io, 'red', '-') };
    for (const c of changes) s.io.out(`${mark[c.change]} ${c.key}\n`);
    if (!changes.length) s.io.out('No changes.\n');
  }
  if (!changes.length || dryRun) return;
  await writeEnv(client, w, next);
  if (!s.json) s.io.err(`Saved ${w.name}'s environment (${changes.length} change${changes.length === 1 ? '' : 's'}); it applies at the next deploy.\n`);
}
