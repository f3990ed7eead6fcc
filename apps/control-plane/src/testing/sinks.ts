import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { makeTestTls, type TestTls } from '@skiff/testing';
import { systemResolver } from '@skiff/outbound';

export interface SinkRequest {
  method: string;
  /** Path and query. */
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  json: any;
}

export interface SinkAnswer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/**
 * An HTTP server on 127.0.0.1 standing in for a hosted service: it records every request
 * and answers what `answer` says (JSON unless the body is a string).
 */
export async function startHttpSink(answer: (req: SinkRequest) => SinkAnswer = () => ({ status: 200, body: 'ok' })) {
  const requests: SinkRequest[] = [];
  let respond = answer;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let json: unknown;
      try {
        json = JSON.parse(body);
      } catch {
        json = undefined;
      }
      const recorded = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body, json };
      requests.push(recorded);
      const a = respond(recorded);
      const text = a.body === undefined ? '' : typeof a.body === 'string' ? a.body : JSON.stringify(a.body);
      res.writeHead(a.status, { 'content-type': typeof a.body === 'string' ? 'text/plain' : 'application/json', ...a.headers });
      res.end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    requests,
    answer(next: (req: SinkRequest) => SinkAnswer) {
      respond = next;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The name the SMTP sink's certificate carries; resolve it with `sinkResolver`. */
export const SMTP_TEST_HOST = 'smtp.skiff.test';

/** The system resolver, but SMTP_TEST_HOST is 127.0.0.1 (where the sinks listen). */
export const sinkResolver = async (host: string): Promise<string[]> => (host === SMTP_TEST_HOST ? ['127.0.0.1'] : systemResolver(host));

export interface ReceivedMail {
  from: string;
  to: string[];
  /** Whether the session had upgraded to TLS (STARTTLS) before the message. */
  secure: boolean;
  user: string;
  parsed: ParsedMail;
  raw: string;
}

/**
 * An SMTP server on 127.0.0.1 with STARTTLS (a certificate of a fresh test CA: trust `tls.ca`)
 * and AUTH PLAIN/LOGIN for one user; it refuses a login before TLS.
 */
export async function startSmtpSink(login: { user: string; pass: string }) {
  const tls: TestTls = makeTestTls(['127.0.0.1', 'localhost', SMTP_TEST_HOST]);
  const received: ReceivedMail[] = [];
  const server = new SMTPServer({
    secure: false,
    key: tls.key,
    cert: tls.cert,
    authMethods: ['PLAIN', 'LOGIN'],
    // Authentication over a clear connection is refused by the server itself (allowInsecureAuth false).
    allowInsecureAuth: false,
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === login.user && auth.password === login.pass) callback(null, { user: auth.username });
      else callback(Object.assign(new Error('Invalid username or password'), { responseCode: 535 }));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        simpleParser(raw).then((parsed) => {
          received.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
            secure: session.secure,
            user: String(session.user ?? ''),
            parsed,
            raw,
          });
          callback();
        }, callback);
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return {
    port,
    ca: tls.ca,
    received,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      tls.remove();
    },
  };
}
