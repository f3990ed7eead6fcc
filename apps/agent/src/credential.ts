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
 *
 * NATS credentials: in NATS operator mode every registration hands out the agent's NATS
 * credentials. The newest are kept in `<dataDir>/nats-credentials.json` (0600, replaced
 * atomically) so that a restarted agent connects to NATS, resuming and consuming its
 * commands, while the control plane is unreachable. A registration that hands out none (an
 * open NATS) removes the file. They are never logged either.
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AgentConfig } from './config.js';

export class CredentialError extends Error {
  override name = 'CredentialError';
}

/** The control plane refused a join token (unknown, used, expired, or another server's). */
export class JoinRefusedError extends Error {
  override name = 'JoinRefusedError';
}

/**
 * The control plane refused to register the agent with its credential (UNAUTHENTICATED:
 * revoked or the server removed; PERMISSION_DENIED: another server's). No retry changes it.
 */
export class RegistrationRefusedError extends CredentialError {
  override name = 'RegistrationRefusedError';
  constructor(
    /** The gRPC status name, e.g. `UNAUTHENTICATED`. */
    readonly code: string,
    /** The control plane's reason. */
    readonly reason: string,
  ) {
    super(
      `the control plane refused this server's credential (${code}: ${reason}): it was revoked or the server was removed; ` +
        'join again with a new token from server.regenerateJoinToken (SKIFF_JOIN_TOKEN)',
    );
  }
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

export const STORED_NATS_CREDENTIALS_FILE = 'nats-credentials.json';

/** The NATS credentials of a registration: a `.creds` file's text (a secret) and the inbox prefix to use. */
export interface NatsCredentials {
  creds: string;
  inboxPrefix: string;
}

/**
 * The NATS credentials the newest registration handed out, or null when none are stored
 * (or they are unusable: another server's, or not what this agent writes; a registration
 * replaces them). A file others can read is refused like a credential file.
 */
export async function readStoredNatsCredentials(dataDir: string, serverId: string): Promise<NatsCredentials | null> {
  const file = join(dataDir, STORED_NATS_CREDENTIALS_FILE);
  try {
    await stat(file);
  } catch {
    return null;
  }
  let stored: { serverId?: unknown; creds?: unknown; inboxPrefix?: unknown };
  try {
    stored = JSON.parse(await readPrivateFile(file)) as typeof stored;
  } catch (err) {
    if (err instanceof CredentialError) throw err;
    return null;
  }
  if (stored.serverId !== serverId || typeof stored.creds !== 'string' || stored.creds === '' || typeof stored.inboxPrefix !== 'string') return null;
  return { creds: stored.creds, inboxPrefix: stored.inboxPrefix };
}

/** Keeps the NATS credentials of a registration (0600, replaced atomically), or removes them when it handed out none. */
export async function storeNatsCredentials(dataDir: string, serverId: string, nats: NatsCredentials | null): Promise<void> {
  const file = join(dataDir, STORED_NATS_CREDENTIALS_FILE);
  if (!nats) {
    await rm(file, { force: true });
    return;
  }
  const temporary = `${file}.${process.pid}.tmp`;
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  await writeFile(temporary, JSON.stringify({ serverId, creds: nats.creds, inboxPrefix: nats.inboxPrefix }) + '\n', { mode: 0o600 });
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
