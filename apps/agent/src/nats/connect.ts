/**
 * The agent's NATS connection. The NATS client does not read credentials from server URLs,
 * so `nats://user:pass@host` is split here into credential-free server URLs plus
 * user/password options (from the first URL that carries them). The connection waits for
 * a first server and reconnects forever: commands simply wait in their stream meanwhile.
 */
import { connect, credsAuthenticator, type ConnectionOptions, type NatsConnection } from '@nats-io/transport-node';
import type { Logger } from 'pino';

export function natsConnectionOptions(servers: readonly string[], name: string, tls?: { ca: string }): ConnectionOptions {
  let user: string | undefined;
  let pass: string | undefined;
  const plain = servers.map((server) => {
    const url = new URL(server);
    if ((url.username || url.password) && user === undefined) {
      user = decodeURIComponent(url.username);
      pass = decodeURIComponent(url.password);
    }
    url.username = '';
    url.password = '';
    return `${url.protocol}//${url.host}`;
  });
  return {
    servers: plain,
    name,
    ...(user !== undefined ? { user, pass } : {}),
    // TLS required, checked against this CA alone (the control plane's, pinned).
    ...(tls ? { tls: { ca: tls.ca } } : {}),
    waitOnFirstConnect: true,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 1_000,
  };
}

/**
 * NATS credentials handed out at registration (operator mode), or stored by an earlier one;
 * read again at every reconnect, so newer ones are used from the next reconnect on.
 */
export type NatsCredentialsSource = () => { creds: string; inboxPrefix: string } | null;

/** Connects, logging state changes (server addresses only, never credentials). */
export async function connectNats(
  servers: readonly string[],
  name: string,
  log: Logger,
  credentials?: NatsCredentialsSource,
  tls?: { ca: string },
): Promise<NatsConnection> {
  const options = natsConnectionOptions(servers, name, tls);
  const first = credentials?.();
  const nc = await connect(
    first
      ? {
          ...options,
          inboxPrefix: first.inboxPrefix,
          // Credentials that expired while the agent was cut off are refused until a
          // registration brings new ones: keep trying rather than give up after two refusals.
          ignoreAuthErrorAbort: true,
          authenticator: credsAuthenticator(() => new TextEncoder().encode(credentials?.()?.creds ?? first.creds)),
        }
      : options,
  );
  void (async () => {
    for await (const s of nc.status()) {
      if (s.type === 'disconnect' || s.type === 'reconnect') log.info({ nats: s.type, server: s.server }, `NATS ${s.type}`);
      else if (s.type === 'error') log.warn({ nats: s.type }, 'NATS error');
    }
  })().catch(() => {});
  return nc;
}
