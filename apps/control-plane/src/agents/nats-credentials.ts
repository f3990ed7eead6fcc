/**
 * NATS credentials for agents. When NATS runs in operator mode (tools/up sets it up: see
 * tools/lib/nats-auth.mjs), the control plane holds the account's signing seed and gives
 * each agent, when it registers, a user JWT that only allows that server's own commands
 * and control requests (agentNatsPermissions). Without a seed, NATS is open (tests, or an
 * operator's own NATS) and agents get no credentials.
 */
import { agentInboxPrefix } from '@skiff/domain';
import { agentNatsCreds, natsAccountKeyPair } from '@skiff/domain/nats-user-jwt';

export interface AgentNatsCredentials {
  /** The text of a NATS `.creds` file (user JWT and its seed): a secret. */
  creds: string;
  inboxPrefix: string;
}

export interface NatsCredentialIssuer {
  forServer(serverId: string): Promise<AgentNatsCredentials>;
}

/** An issuer signing with the account seed (`SA…`), or null when there is none. */
export function natsCredentialIssuer(accountSeed: string | null, validForMs = 24 * 3_600_000): NatsCredentialIssuer | null {
  if (!accountSeed) return null;
  const account = natsAccountKeyPair(accountSeed);
  return {
    async forServer(serverId) {
      const creds = await agentNatsCreds(account, serverId, new Date(Date.now() + validForMs));
      return { creds, inboxPrefix: agentInboxPrefix(serverId) };
    },
  };
}
