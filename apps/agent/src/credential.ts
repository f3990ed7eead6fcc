/**
 * The agent's server credential: from the environment, from the file it names, or the one
 * a join stored in the data directory. Files must be private to the agent's user (no group
 * or other permissions): a readable credential is refused rather than used. The credential
 * and the join token are never logged.
 *
 * Joining: with SKIFF_JOIN_TOKEN and no explicit credential, the agent presents the token
 * once and stores the credential it receives in `<dataDir>/server-credential.json` (mode
 * 0600) with the server id and a digest of the token. A restart with the same token (the
 * join command pasted again, or a service manager keeping the environment) uses the stored
 * credential without joining again; a different token joins again (re-joining replaces the
 * server's credential); no token uses the stored credential.
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AgentConfig } from './config.js';

export class CredentialError extends Error {
  override name = 'CredentialError';
}

/** The control plane refused a join token (unknown, used, expired, or another server's). */
export class JoinRefusedError extends Error {
  override name = 'JoinRefusedError';
}

export const STORED_CREDENTIAL_FILE = 'server-credential.json';

interface StoredCredential {
  serverId: string;
  credential: string;
  /** SHA-256 (hex) of the join token the credential came from. */
  joinTokenSha256: string;
}

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

export async function readCredential(source: { value: string } | { file: string }): Promise<string> {
  if ('value' in source) return source.value;
  const value = (await readPrivateFile(source.file)).trim();
  if (value === '') throw new CredentialError(`the credential file ${source.file} is empty`);
  return value;
}

async function readPrivateFile(file: string): Promise<string> {
  let mode: number;
  try {
    mode = (await stat(file)).mode;
  } catch (err) {
    throw new CredentialError(`cannot read the credential file ${file}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  if ((mode & 0o077) !== 0) {
    throw new CredentialError(`the credential file ${file} is readable by others (mode ${(mode & 0o777).toString(8)}); make it 0600`);
  }
  return readFile(file, 'utf8');
}

/** The credential a join stored for this server, or null when there is none. */
export async function readStoredCredential(dataDir: string, serverId: string): Promise<StoredCredential | null> {
  const file = join(dataDir, STORED_CREDENTIAL_FILE);
  try {
    await stat(file);
  } catch {
    return null;
  }
  let stored: Partial<StoredCredential>;
  try {
    stored = JSON.parse(await readPrivateFile(file)) as Partial<StoredCredential>;
  } catch (err) {
    if (err instanceof CredentialError) throw err;
    throw new CredentialError(`${file} is not a stored credential (remove it and join again)`);
  }
  if (typeof stored.credential !== 'string' || stored.credential === '' || typeof stored.serverId !== 'string') {
    throw new CredentialError(`${file} is not a stored credential (remove it and join again)`);
  }
  if (stored.serverId !== serverId) {
    throw new CredentialError(`${file} holds the credential of server ${stored.serverId}, not ${serverId}`);
  }
  return { serverId: stored.serverId, credential: stored.credential, joinTokenSha256: String(stored.joinTokenSha256 ?? '') };
}

/** Writes the credential a join brought (0600, replaced atomically). */
export async function storeCredential(dataDir: string, serverId: string, credential: string, joinToken: string): Promise<void> {
  const file = join(dataDir, STORED_CREDENTIAL_FILE);
  const temporary = `${file}.${process.pid}.tmp`;
  const content: StoredCredential = { serverId, credential, joinTokenSha256: sha256(joinToken) };
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  await writeFile(temporary, JSON.stringify(content) + '\n', { mode: 0o600 });
  await rename(temporary, file);
}

export interface ObtainCredentialOptions {
  config: Pick<AgentConfig, 'credential' | 'joinToken' | 'dataDir' | 'serverId'>;
  /** Presents the join token to the control plane; answers the new credential or throws JoinRefusedError. */
  join: (token: string) => Promise<string>;
  /** Told what happened (never the secrets). */
  note: (what: 'stored' | 'joined' | 'join-refused-using-stored', detail?: string) => void;
}

/** The credential the agent presents from now on, joining first when that is what the configuration says. */
export async function obtainCredential(o: ObtainCredentialOptions): Promise<string> {
  const { config } = o;
  if (!('stored' in config.credential)) return readCredential(config.credential);
  const stored = await readStoredCredential(config.dataDir, config.serverId);
  if (config.joinToken) {
    if (stored && stored.joinTokenSha256 === sha256(config.joinToken)) {
      o.note('stored');
      return stored.credential;
    }
    try {
      const credential = await o.join(config.joinToken);
      await storeCredential(config.dataDir, config.serverId, credential, config.joinToken);
      o.note('joined');
      return credential;
    } catch (err) {
      if (!(err instanceof JoinRefusedError)) throw err;
      if (!stored) throw new CredentialError(`the control plane refused the join token: ${err.message}`);
      o.note('join-refused-using-stored', err.message);
      return stored.credential;
    }
  }
  if (stored) {
    o.note('stored');
    return stored.credential;
  }
  throw new CredentialError(
    'no credential: set SKIFF_JOIN_TOKEN (from server.create or server.regenerateJoinToken), SKIFF_AGENT_CREDENTIAL or SKIFF_AGENT_CREDENTIAL_FILE',
  );
}
