/**
 * Tests only: NATS credentials for an agent, signed with the account seed of a NATS server
 * in operator mode (libs/testing's startDedicatedNats({ auth: true }) writes it to
 * `account.nk`), with the permissions the control plane gives agents (agentNatsPermissions).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { encodeUser, fmtCreds } from '@nats-io/jwt';
import { createUser, fromSeed } from '@nats-io/nkeys';
import { agentInboxPrefix, agentNatsPermissions } from '@skiff/domain';

export type AgentCredentialsMinter = (serverId: string) => Promise<{ creds: string; inboxPrefix: string }>;

export async function agentCredentialsMinter(authDir: string): Promise<AgentCredentialsMinter> {
  const account = fromSeed(new TextEncoder().encode((await readFile(join(authDir, 'account.nk'), 'utf8')).trim()));
  return async (serverId) => {
    const user = createUser();
    const jwt = await encodeUser(`agent-${serverId}`, user, account, agentNatsPermissions(serverId), { exp: Math.floor(Date.now() / 1000) + 3_600 });
    return { creds: new TextDecoder().decode(fmtCreds(jwt, user)), inboxPrefix: agentInboxPrefix(serverId) };
  };
}
