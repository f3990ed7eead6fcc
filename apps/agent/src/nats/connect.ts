/**
 * The agent's NATS connection. The NATS client does not read credentials from server URLs,
 * so `nats://user:pass@host` is split here into credential-free server URLs plus
 * user/password options (from the first URL that carries them). The connection waits for
 * a first server and reconnects forever: commands simply wait in their stream meanwhile.
 */
import { connect, type ConnectionOptions, type NatsConnection } from '@nats-io/transport-node';
import type { Logger } from 'pino';

export function natsConnectionOptions(servers: readonly string[], name: string): ConnectionOptions {
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
    waitOnFirstConnect: true,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 1_000,
  };
}

/** Connects, logging state changes (server addresses only, never credentials). */
export async function connectNats(servers: readonly string[], name: string, log: Logger): Promise<NatsConnection> {
  const nc = await connect(natsConnectionOptions(servers, name));
  void (async () => {
    for await (const s of nc.status()) {
      if (s.type === 'disconnect' || s.type === 'reconnect') log.info({ nats: s.type, server: s.server }, `NATS ${s.type}`);
      else if (s.type === 'error') log.warn({ nats: s.type }, 'NATS error');
    }
  })().catch(() => {});
  return nc;
}
