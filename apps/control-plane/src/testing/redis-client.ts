// A minimal Redis client for end-to-end tests: RESP over a plain TCP socket, so tests reach a
// Redis exactly as a user would, on its published host port, with no client library.
import { connect } from 'node:net';

/** One RESP command: an array of bulk strings. */
const encode = (args: string[]) => `*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`;

/**
 * The replies of Redis at 127.0.0.1:`port` to `commands`, sent on one connection: simple
 * strings as they are, errors with their leading `-`, bulk strings as their value (null for
 * none), integers as text. Null when nothing answers (refused, closed or silent).
 */
export function redis(port: number, commands: string[][]): Promise<(string | null)[] | null> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    let data = '';
    const done = (value: (string | null)[] | null) => {
      socket.destroy();
      resolve(value);
    };
    socket.setTimeout(3_000, () => done(null));
    socket.on('error', () => done(null));
    socket.on('close', () => done(null));
    socket.on('connect', () => socket.write(commands.map(encode).join('')));
    socket.on('data', (chunk) => {
      data += chunk.toString('utf8');
      const replies = parseReplies(data, commands.length);
      if (replies) done(replies);
    });
  });
}

/** `count` replies from the start of `data`, or null while some are still missing. */
function parseReplies(data: string, count: number): (string | null)[] | null {
  const replies: (string | null)[] = [];
  let at = 0;
  while (replies.length < count) {
    const end = data.indexOf('\r\n', at);
    if (end < 0) return null;
    const line = data.slice(at, end);
    at = end + 2;
    if (line.startsWith('$')) {
      const length = Number(line.slice(1));
      if (length < 0) {
        replies.push(null);
        continue;
      }
      if (data.length < at + length + 2) return null;
      replies.push(data.slice(at, at + length));
      at += length + 2;
    } else {
      replies.push(line.startsWith('-') ? line : line.slice(1));
    }
  }
  return replies;
}
