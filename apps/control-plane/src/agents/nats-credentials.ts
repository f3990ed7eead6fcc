/**
 * NATS credentials for agents. When NATS runs in operator mode (tools/up sets it up: see
 * tools/lib/nats-auth.mjs), the control plane holds the account's signing seed and gives
 * each agent, when it registers, a user JWT that only allows that server's own commands
 * and control requests (agentNatsPermissions). Without a seed, NATS is open (tests, or an
 * operator's own NATS) and agents get no credentials.
 */
import { encodeUser, fmtCreds } from '@nats-io/jwt';
import { createUser, fromSeed, type KeyPair } from '@nats-io/nkeys';
import { agentInboxPrefix, agentNatsPermissions } from '@skiff/domain';

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
  const account: KeyPair = fromSeed(new TextEncoder().encode(accountSeed.trim()));
  if (!account.getPublicKey().startsWith('A')) throw new Error('the NATS account seed is not an account key (SA…)');
  return {
    async forServer(serverId) {
      const user = createUser();
      const jwt = await encodeUser(`agent-${serverId}`, user, account, agentNatsPermissions(serverId), {
        exp: Math.floor((Date.now() + validForMs) / 1000),
      });
      return { creds: new TextDecoder().decode(fmtCreds(jwt, user)), inboxPrefix: agentInboxPrefix(serverId) };
    },
  };
}
