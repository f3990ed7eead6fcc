/**
 * The value of OWNER_LABEL (throwaway-leftovers.ts) this agent puts on its throw-away
 * containers: its server id and an id made once per data directory. The server id alone does
 * not tell two agents apart when they share an engine under one id (two `tools/up` on one
 * machine are both `local`): the start of one would remove the relay another's restore is
 * running through. The data directory holds the journal whose commands own those containers,
 * so it is what a container's owner must name.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export const INSTANCE_FILE = 'agent-instance';

const INSTANCE_PATTERN = /^[0-9a-f]{16}$/;

/** `<serverId>/<instance>`, the instance read from `<dataDir>/agent-instance`, made there at the first call. */
export async function throwawayOwner(dataDir: string, serverId: string): Promise<string> {
  const path = join(dataDir, INSTANCE_FILE);
  const stored = await readFile(path, 'utf8').then((text) => text.trim(), () => '');
  if (INSTANCE_PATTERN.test(stored)) return `${serverId}/${stored}`;
  const made = randomBytes(8).toString('hex');
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  await writeFile(path, `${made}\n`, { mode: 0o600 });
  return `${serverId}/${made}`;
}
