/**
 * Tests only: NATS credentials for an agent, signed with the account seed of a NATS server
 * in operator mode (libs/testing's startDedicatedNats({ auth: true }) writes it to
 * `account.nk`), with the permissions the control plane gives agents (libs/domain's
 * agentNatsCreds).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { agentInboxPrefix } from '@skiff/domain';
import { agentNatsCreds, natsAccountKeyPair } from '@skiff/domain/nats-user-jwt';

export type AgentCredentialsMinter = (serverId: string) => Promise<{ creds: string; inboxPrefix: string }>;

export async function agentCredentialsMinter(authDir: string): Promise<AgentCredentialsMinter> {
  const account = natsAccountKeyPair(await readFile(join(authDir, 'account.nk'), 'utf8'));
  return async (serverId) => ({
    creds: await agentNatsCreds(account, serverId, new Date(Date.now() + 3_600_000)),
    inboxPrefix: agentInboxPrefix(serverId),
  });
}
