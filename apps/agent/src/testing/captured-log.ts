import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';

/**
 * A logger whose lines a test reads back (`text()`), printed as well when TEST_LOG_LEVEL
 * names a level other than `silent`.
 */
export function capturedLog(level: pino.Level = 'info'): { log: Logger; text: () => string } {
  let text = '';
  const show = Boolean(process.env.TEST_LOG_LEVEL && process.env.TEST_LOG_LEVEL !== 'silent');
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString('utf8');
      if (show) process.stdout.write(chunk);
      done();
    },
  });
  return { log: pino({ level }, sink), text: () => text };
}
