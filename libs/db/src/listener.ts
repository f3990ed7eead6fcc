import pg from 'pg';

export interface ListenHandlers {
  /** A notification on the channel (its payload; '' when none). */
  notified(payload: string): void;
  /** `LISTEN` holds (at start, and again after a reconnection): from now on nothing is missed. */
  listening(): void;
  /** The connection broke or could not be made: notifications may be missed until `listening`. */
  lost(err: Error): void;
}

export interface ListenOptions {
  /** First wait before reconnecting; doubled at each failure up to `maxBackoffMs`. */
  minBackoffMs?: number;
  maxBackoffMs?: number;
  /** A `SELECT 1` this often finds a connection that died without closing (a dropped network). */
  pingEveryMs?: number;
  /** A ping not answered within this is a lost connection. */
  pingTimeoutMs?: number;
}

export interface NotificationListener {
  readonly isListening: boolean;
  close(): Promise<void>;
}

const CHANNEL = /^[a-z_][a-z0-9_]{0,50}$/;

/** The `application_name` of a listening connection (pg_stat_activity shows who listens). */
export const listenerName = (channel: string) => `skiff-listen-${channel}`;

/**
 * `LISTEN channel` on a connection of its own (a pooled one would be handed to other queries),
 * connected again with backoff whenever it breaks.
 */
export function listenFor(url: string, channel: string, handlers: ListenHandlers, options: ListenOptions = {}): NotificationListener {
  if (!CHANNEL.test(channel)) throw new Error(`not a channel name: ${channel}`);
  const minBackoff = options.minBackoffMs ?? 100;
  const maxBackoff = options.maxBackoffMs ?? 5_000;
  const pingEvery = options.pingEveryMs ?? 10_000;
  const pingTimeout = options.pingTimeoutMs ?? 5_000;
  let client: pg.Client | undefined;
  let closed = false;
  let listening = false;
  let failures = 0;
  let retry: NodeJS.Timeout | undefined;
  let ping: NodeJS.Timeout | undefined;

  const connect = async () => {
    retry = undefined;
    if (closed) return;
    const c = new pg.Client({ connectionString: url, keepAlive: true, application_name: listenerName(channel) });
    client = c;
    let broken = false;
    const drop = (err: Error) => {
      if (broken) return;
      broken = true;
      clearInterval(ping);
      c.removeAllListeners('notification');
      c.end().catch(() => {});
      if (client === c) client = undefined;
      listening = false;
      if (closed) return;
      handlers.lost(err);
      const wait = Math.min(maxBackoff, minBackoff * 2 ** failures++);
      retry = setTimeout(() => void connect(), wait);
      retry.unref();
    };
    c.on('error', drop);
    c.on('end', () => drop(new Error('the listening connection ended')));
    c.on('notification', (n) => {
      if (n.channel === channel) handlers.notified(n.payload ?? '');
    });
    try {
      await c.connect();
      await c.query(`LISTEN ${channel}`);
    } catch (err) {
      drop(err as Error);
      return;
    }
    if (broken || closed) return;
    failures = 0;
    listening = true;
    handlers.listening();
    ping = setInterval(() => {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('the listening connection did not answer a ping')), pingTimeout);
      });
      Promise.race([c.query('SELECT 1'), late])
        .catch((err: unknown) => drop(err as Error))
        .finally(() => clearTimeout(timer));
    }, pingEvery);
    ping.unref();
  };
  void connect();

  return {
    get isListening() {
      return listening;
    },
    async close() {
      closed = true;
      listening = false;
      clearTimeout(retry);
      clearInterval(ping);
      const c = client;
      client = undefined;
      await c?.end().catch(() => {});
    },
  };
}
