import { flagOn, onlyFlags, stringFlag } from '../args.js';
import { createClient } from '../client.js';
import { readConfig, writeConfig } from '../config.js';
import { usage } from '../errors.js';
import { type Io, human, paint, table } from '../output.js';
import type { Session } from '../session.js';
import { op } from '../workloads.js';
import { trimTrailing } from '../text.js';

const LOOPBACK = /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])$/;

/** Reads a line from the terminal without echoing it. */
export function promptHidden(io: Io, question: string): Promise<string> {
  const stdin = io.stdin;
  if (!stdin.isTTY || !stdin.setRawMode) throw usage('no terminal to ask the API key in: pipe it with --api-key-stdin');
  io.err(question);
  stdin.setRawMode(true);
  stdin.resume();
  return new Promise((resolve, reject) => {
    let value = '';
    const done = (err?: Error) => {
      stdin.setRawMode!(false);
      stdin.pause();
      stdin.removeListener('data', onData);
      io.err('\n');
      if (err) reject(err);
      else resolve(value);
    };
    const onData = (chunk: Buffer | string) => {
      for (const ch of chunk.toString('utf8')) {
        if (ch === '\r' || ch === '\n') return done();
        if (ch === '\u0003' || ch === '\u0004') return done(usage('login cancelled'));
        if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1);
        else if (ch >= ' ') value += ch;
      }
    };
    stdin.on('data', onData);
  });
}

/** `skiff login <url> [--name context] [--api-key-stdin]`: checks the key, then stores it as a context. */
export async function login(s: Session): Promise<void> {
  onlyFlags(s.args, ['name', 'api-key-stdin', 'json', 'help', 'context'], 'login');
  const [raw, ...extra] = s.args.positionals;
  if (!raw || extra.length) throw usage('usage: skiff login <url> [--name <context>] [--api-key-stdin]');
  let url: URL;
  try {
    url = new URL(raw);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('scheme');
  } catch {
    throw usage(`url: not an http(s) URL: ${raw}`);
  }
  const base = trimTrailing(url.href, '/');
  if (url.protocol === 'http:' && !LOOPBACK.test(url.hostname)) s.io.err(`Warning: ${url.host} is not loopback and the URL is http: the key would cross the network in clear.\n`);
  const name = stringFlag(s.args, 'name') ?? url.host;
  if (!/^[A-Za-z0-9._:-]{1,64}$/.test(name)) throw usage('name: letters, digits, . _ : - (at most 64)');
  const apiKey = (flagOn(s.args, 'api-key-stdin') ? s.readStdin() : await promptHidden(s.io, `API key for ${base}: `)).trim();
  if (!apiKey) throw usage('no API key given');
  const me = await createClient({ url: base, apiKey }).call<{ email?: string; user?: { email?: string } }>(op('user.get'), {});
  const config = readConfig(s.io.env);
  config.contexts[name] = { url: base, apiKey };
  config.current = name;
  writeConfig(config, s.io.env);
  const who = me?.email ?? me?.user?.email;
  if (s.json) s.io.out(`${JSON.stringify({ context: name, url: base, user: who ?? null })}\n`);
  else s.io.out(`Logged in to ${base}${who ? ` as ${who}` : ''}; context ${paint(s.io, 'bold', name)} is now current.\n`);
}

/** `skiff context list|use <name>|remove <name>`: never shows a key. */
export async function context(s: Session): Promise<void> {
  onlyFlags(s.args, ['json', 'help', 'context'], 'context');
  const [sub, name, ...extra] = s.args.positionals;
  const config = readConfig(s.io.env);
  if (sub === 'list' || sub === undefined) {
    const rows = Object.entries(config.contexts).map(([n, c]) => ({ current: n === config.current, name: n, url: c.url }));
    s.io.out(s.json ? `${JSON.stringify(rows, null, 2)}\n` : rows.length ? table(s.io, rows.map((r) => ({ ...r, current: r.current ? '*' : '' })), ['current', 'name', 'url']) : 'No contexts: skiff login <url>\n');
    return;
  }
  if ((sub !== 'use' && sub !== 'remove') || !name || extra.length) throw usage('usage: skiff context list | use <name> | remove <name>');
  if (!Object.hasOwn(config.contexts, name)) throw usage(`name: no context named "${name}"`);
  if (sub === 'use') config.current = name;
  else {
    delete config.contexts[name];
    if (config.current === name) config.current = null;
  }
  writeConfig(config, s.io.env);
  s.io.out(s.json ? `${JSON.stringify({ current: config.current })}\n` : human(s.io, sub === 'use' ? `Context ${name} is now current.` : `Context ${name} removed.`));
}
