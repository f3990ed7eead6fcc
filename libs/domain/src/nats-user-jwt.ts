/**
 * An agent's NATS user: a user JWT signed with the NATS account's key, with the permissions
 * of one server's agent (agentNatsPermissions), given as the text of a NATS `.creds` file.
 * The control plane mints one for each agent that registers; tests mint them against a NATS
 * server in operator mode. Imported as `@skiff/domain/nats-user-jwt`, outside the index, so
 * that the agent's bundle does not carry the JWT library.
 */
import { encodeUser, fmtCreds } from '@nats-io/jwt';
import { createUser, fromSeed, type KeyPair } from '@nats-io/nkeys';
import { agentNatsPermissions } from './agent-channel.js';

/** The account's key pair from its seed (`SA…`, surrounding white space ignored); throws when it is not an account's. */
export function natsAccountKeyPair(seed: string): KeyPair {
  const account = fromSeed(new TextEncoder().encode(seed.trim()));
  if (!account.getPublicKey().startsWith('A')) throw new Error('the NATS account seed is not an account key (SA…)');
  return account;
}

/**
 * The `.creds` text (the user JWT and the user's seed: a secret) of a new NATS user for the
 * agent of `serverId`, signed by `account`, valid until `expiresAt` (to the second).
 */
export async function agentNatsCreds(account: KeyPair, serverId: string, expiresAt: Date): Promise<string> {
  const user = createUser();
  const jwt = await encodeUser(`agent-${serverId}`, user, account, agentNatsPermissions(serverId), {
    exp: Math.floor(expiresAt.getTime() / 1000),
  });
  return new TextDecoder().decode(fmtCreds(jwt, user));
}
