/**
 * The control plane's command key as this agent trusts it: pinned in
 * `<dataDir>/command-key.json` (0600, with the server id) at the first start, and from then
 * on the only key whose signatures the agent accepts (libs/domain command-signature.ts).
 *
 * - A start that joins with a new token pins the join command's SKIFF_COMMAND_KEY (required
 *   then), replacing any earlier one: a new join is the operator's word, as for the credential.
 * - Otherwise a pinned key is used. SKIFF_COMMAND_KEY may be left out; when it is set and
 *   differs, the agent refuses to start: whoever can change its environment (or replay an old
 *   join command) does not change the key it trusts without a new join.
 * - With nothing pinned yet (an agent with an explicit credential, such as tools/up's local
 *   agent, or one that joined before commands were signed), SKIFF_COMMAND_KEY is pinned.
 * - Nothing pinned and no SKIFF_COMMAND_KEY: the agent refuses to start. It never runs
 *   unsigned commands.
 */
import { mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CommandVerifier } from '@skiff/domain';
import type { AgentConfig } from './config.js';
import { CredentialError } from './credential.js';

export const PINNED_COMMAND_KEY_FILE = 'command-key.json';

export interface PinnedCommandKey {
  verifier: CommandVerifier;
  /** What happened: pinned now (`pinned`), replaced by a new join (`replaced`), or the one pinned earlier (`kept`). */
  how: 'pinned' | 'replaced' | 'kept';
}

/**
 * The key to verify commands with. `joined`: this start presented a new join token and the
 * control plane accepted it. Throws CredentialError (the agent cannot start) when there is
 * no key, or when SKIFF_COMMAND_KEY differs from the pinned one without a new join.
 */
export async function pinCommandKey(config: Pick<AgentConfig, 'commandKey' | 'dataDir' | 'serverId'>, joined: boolean): Promise<PinnedCommandKey> {
  const file = join(config.dataDir, PINNED_COMMAND_KEY_FILE);
  const pinned = await readPinned(file, config.serverId);
  const given = config.commandKey;
  if (joined) {
    if (!given) throw new CredentialError('the join brought no command key: start the agent with the whole join command (SKIFF_COMMAND_KEY)');
    await writePinned(file, config.serverId, given);
    return { verifier: CommandVerifier.fromText(given), how: pinned && pinned !== given ? 'replaced' : pinned ? 'kept' : 'pinned' };
  }
  if (pinned) {
    if (given && given !== pinned) {
      throw new CredentialError(
        `SKIFF_COMMAND_KEY differs from the control plane key pinned in ${file}: the pinned key changes only with a new join ` +
          '(a token from server.regenerateJoinToken); to trust the new key on purpose, remove that file',
      );
    }
    return { verifier: CommandVerifier.fromText(pinned), how: 'kept' };
  }
  if (!given) {
    throw new CredentialError(
      "no command key: set SKIFF_COMMAND_KEY to the control plane's public command key (in the join command; tools/up passes the local agent's), " +
        'the agent refuses to run unsigned commands',
    );
  }
  await writePinned(file, config.serverId, given);
  return { verifier: CommandVerifier.fromText(given), how: 'pinned' };
}

async function readPinned(file: string, serverId: string): Promise<string | null> {
  let text: string;
  try {
    if (((await stat(file)).mode & 0o022) !== 0) throw new CredentialError(`${file} is writable by others: make it 0600`);
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    if (err instanceof CredentialError) throw err;
    throw new CredentialError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  let stored: { serverId?: unknown; publicKey?: unknown };
  try {
    stored = JSON.parse(text) as typeof stored;
  } catch {
    throw new CredentialError(`${file} is not a pinned command key (remove it and join again)`);
  }
  if (stored.serverId !== serverId) throw new CredentialError(`${file} holds the command key pinned for server ${String(stored.serverId)}, not ${serverId}`);
  if (typeof stored.publicKey !== 'string') throw new CredentialError(`${file} is not a pinned command key (remove it and join again)`);
  try {
    CommandVerifier.fromText(stored.publicKey);
  } catch (err) {
    throw new CredentialError(`${file} holds no usable key (${(err as Error).message}); remove it and join again`);
  }
  return stored.publicKey;
}

async function writePinned(file: string, serverId: string, publicKey: string): Promise<void> {
  const temporary = `${file}.${process.pid}.tmp`;
  await mkdir(join(file, '..'), { recursive: true, mode: 0o700 });
  await writeFile(temporary, JSON.stringify({ serverId, publicKey }) + '\n', { mode: 0o600 });
  await rename(temporary, file);
}
