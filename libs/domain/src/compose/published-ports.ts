/**
 * The host ports a compose file publishes (`services.*.ports`), as Compose reads them:
 * - short syntax `[HOST_IP:][HOST:]CONTAINER[/PROTOCOL]`, the host IP an IPv4 address or a
 *   bracketed IPv6 one (`[::1]:8080:80`), ports or ranges (`8000-8010:8000-8010`);
 * - long syntax `{ target, published, host_ip, protocol, mode }`, `published` a port or a range.
 * A port without a host part publishes nothing fixed (the engine picks one) and is left out. A
 * host IP does not make a port another one: whatever address it binds, the port is the
 * host's. An interpolation reads the stack's variables (`env`, as Compose reads `.env`:
 * `${PORT}`, `$PORT`, `${PORT:-8080}`, `${PORT-8080}`, `${PORT:?…}`), else its default; a value
 * still holding one is left out (`unresolved` lists those). Ports are `<port>/<protocol>`.
 */
import { type ComposeInput, composeFileOf } from './compose-file.js';

export interface ComposePorts {
  ports: string[];
  /** Each port of `ports` with the service publishing it. */
  published: { service: string; port: string }[];
  /** `service: value` of each published port interpolated without a default. */
  unresolved: string[];
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export function composePublishedPorts(input: ComposeInput, env: ReadonlyMap<string, string> = new Map()): ComposePorts {
  const root = composeFileOf(input).document.toJS({ maxAliasCount: -1 }) as unknown;
  const out: ComposePorts = { ports: [], published: [], unresolved: [] };
  const services = isObj(root) && isObj(root.services) ? root.services : {};
  for (const [service, raw] of Object.entries(services)) {
    if (!isObj(raw) || !Array.isArray(raw.ports)) continue;
    for (const entry of raw.ports) {
      const found = isObj(entry) ? longSyntax(entry) : typeof entry === 'string' || typeof entry === 'number' ? shortSyntax(String(entry)) : null;
      if (found === null) continue;
      const range = hostRange(found.published, env);
      if (range === 'unresolved') out.unresolved.push(`${service}: ${found.published}`);
      else if (range) {
        for (let n = range[0]; n <= range[1]; n++) {
          const port = `${n}/${found.protocol}`;
          out.ports.push(port);
          out.published.push({ service, port });
        }
      }
    }
  }
  return out;
}

interface Published {
  published: string;
  protocol: string;
}

function longSyntax(entry: Obj): Published | null {
  if (entry.published === undefined || entry.published === null || entry.published === '') return null;
  return { published: String(entry.published), protocol: protocolOf(entry.protocol) };
}

function shortSyntax(text: string): Published | null {
  const slash = text.lastIndexOf('/');
  const protocol = slash >= 0 && !text.slice(slash).includes(':') ? protocolOf(text.slice(slash + 1)) : 'tcp';
  let rest = slash >= 0 && !text.slice(slash).includes(':') ? text.slice(0, slash) : text;
  // A bracketed IPv6 host address first; an interpolation's `:-` is not a separator.
  if (rest.startsWith('[')) rest = rest.slice(rest.indexOf(']') + 2);
  const parts = splitColons(rest);
  if (parts.length < 2) return null;
  return { published: parts[parts.length - 2], protocol };
}

/** Splits on `:` outside `${…}`. */
function splitColons(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '$' && text[i + 1] === '{') depth++;
    else if (c === '}' && depth > 0) depth--;
    if (c === ':' && depth === 0) {
      parts.push(current);
      current = '';
    } else current += c;
  }
  parts.push(current);
  return parts;
}

const protocolOf = (value: unknown) => (typeof value === 'string' && value.trim() !== '' ? value.trim().toLowerCase() : 'tcp');

/** `8080` or `8000-8010` (either end may be interpolated) → [first, last]; null: none published. */
function hostRange(published: string, env: ReadonlyMap<string, string>): [number, number] | null | 'unresolved' {
  const text = interpolated(published.trim(), env).trim();
  if (text === '') return null;
  if (text.includes('$')) return 'unresolved';
  const m = /^(\d{1,5})(?:-(\d{1,5}))?$/.exec(text);
  if (!m) return null;
  const first = Number(m[1]);
  const last = m[2] === undefined ? first : Number(m[2]);
  if (first < 1 || last > 65535 || last < first) return null;
  return [first, last];
}

/**
 * `${NAME}`, `$NAME`, `${NAME:-x}`, `${NAME-x}`, `${NAME:?e}`, `${NAME?e}` replaced as Compose
 * replaces them from `env`; what has no value (no variable, no default) is left as written.
 */
function interpolated(text: string, env: ReadonlyMap<string, string>): string {
  let out = '';
  let at = 0;
  for (let i = text.indexOf('$'); i >= 0; i = text.indexOf('$', at)) {
    out += text.slice(at, i);
    if (text[i + 1] === '{') {
      const end = text.indexOf('}', i);
      // No closing brace: nothing further is an interpolation Compose would accept.
      if (end < 0) return out + text.slice(i);
      out += braced(text.slice(i + 2, end), env) ?? text.slice(i, end + 1);
      at = end + 1;
    } else {
      const nameAt = /[A-Za-z_][A-Za-z0-9_]*/y;
      nameAt.lastIndex = i + 1;
      const name = nameAt.exec(text)?.[0] ?? '';
      out += (name ? env.get(name) : undefined) ?? text.slice(i, i + 1 + name.length);
      at = i + 1 + name.length;
    }
  }
  return out + text.slice(at);
}

const NAME_START = /^[A-Za-z_][A-Za-z0-9_]*/;

/** The value of `${inner}`, or null when it has none. */
function braced(inner: string, env: ReadonlyMap<string, string>): string | null {
  const name = NAME_START.exec(inner)?.[0];
  if (!name) return null;
  const op = inner.slice(name.length);
  const value = env.get(name);
  if (op === '') return value ?? null;
  const emptyCounts = op.startsWith(':');
  const kind = op[emptyCounts ? 1 : 0];
  if (kind !== '-' && kind !== '?') return null;
  if (value !== undefined && (!emptyCounts || value !== '')) return value;
  return kind === '-' ? op.slice(emptyCounts ? 2 : 1) : null;
}
