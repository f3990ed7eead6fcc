/**
 * The host ports a compose file publishes (`services.*.ports`), as Compose reads them:
 * - short syntax `[HOST_IP:][HOST:]CONTAINER[/PROTOCOL]`, the host IP an IPv4 address or a
 *   bracketed IPv6 one (`[::1]:8080:80`), ports or ranges (`8000-8010:8000-8010`);
 * - long syntax `{ target, published, host_ip, protocol, mode }`, `published` a port or a range.
 * A port without a host part publishes nothing fixed (the engine picks one) and is left out. A
 * host IP does not make a port another one: whatever address it binds, the port is the
 * host's. An interpolation reads the stack's variables (`env`, as Compose reads `.env`:
 * `${PORT}`, `$PORT`, `${PORT:-8080}`, `${PORT-8080}`, `${PORT:?…}`), else its default; a value
 * still holding one is left out (`unresolved` lists those). A value then not written as a
 * decimal port or range of 1 to 65535, of tcp, udp or sctp, is listed in `invalid`: Compose
 * reads `+80`, `080`, `"0x50"` or `8_0` as port 80. Ranges are merged per protocol before any
 * port is listed, so a file repeating wide ranges (through aliases) costs at most 65 535 ports
 * a protocol. Ports are `<port>/<protocol>`.
 */
import { type ComposeInput, composeFileOf } from './compose-file.js';

export interface PortRange {
  protocol: string;
  first: number;
  last: number;
}

export interface ComposePorts {
  /** Each host port once: `ranges` listed. */
  ports: string[];
  /** The host ports, merged per protocol (protocols in order of appearance, ranges ascending). */
  ranges: PortRange[];
  /** Each published range as written (not merged) with the service publishing it. */
  published: { service: string; range: PortRange }[];
  /** `service: value` of each published port interpolated without a default. */
  unresolved: string[];
  /** `service: value` (`value/protocol` for a protocol Compose does not publish) of each value that is not a port. */
  invalid: string[];
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

const PROTOCOLS = new Set(['tcp', 'udp', 'sctp']);

/** Why an `invalid` value is refused (by the control plane and the agent alike). */
export const NOT_A_PORT = 'a published port must be a port or a range of ports of 1 to 65535, written in decimal, of tcp, udp or sctp';

/** composePublishedPorts without `ports`: what a count (countPorts) needs, nothing expanded. */
export function composePortRanges(input: ComposeInput, env: ReadonlyMap<string, string> = new Map()): Omit<ComposePorts, 'ports'> {
  const root = composeFileOf(input).document.toJS({ maxAliasCount: -1 }) as unknown;
  const out: Omit<ComposePorts, 'ports'> = { ranges: [], published: [], unresolved: [], invalid: [] };
  const byProtocol = new Map<string, [number, number][]>();
  const services = isObj(root) && isObj(root.services) ? root.services : {};
  for (const [service, raw] of Object.entries(services)) {
    if (!isObj(raw) || !Array.isArray(raw.ports)) continue;
    for (const entry of raw.ports) {
      const found = isObj(entry) ? longSyntax(entry) : typeof entry === 'string' || typeof entry === 'number' ? shortSyntax(String(entry)) : null;
      if (found === null) continue;
      const range = hostRange(found.published, env);
      if (range === 'unresolved') out.unresolved.push(`${service}: ${found.published}`);
      else if (range === 'invalid') out.invalid.push(`${service}: ${found.published}`);
      else if (range && !PROTOCOLS.has(found.protocol)) out.invalid.push(`${service}: ${found.published}/${found.protocol}`);
      else if (range) {
        out.published.push({ service, range: { protocol: found.protocol, first: range[0], last: range[1] } });
        const list = byProtocol.get(found.protocol) ?? [];
        list.push(range);
        byProtocol.set(found.protocol, list);
      }
    }
  }
  for (const [protocol, list] of byProtocol) for (const [first, last] of merged(list)) out.ranges.push({ protocol, first, last });
  return out;
}

export function composePublishedPorts(input: ComposeInput, env: ReadonlyMap<string, string> = new Map()): ComposePorts {
  const found = composePortRanges(input, env);
  return { ...found, ports: listPorts(found.ranges) };
}

/** How many host ports merged `ranges` (composePortRanges) hold. */
export const countPorts = (ranges: readonly PortRange[]) => ranges.reduce((n, r) => n + r.last - r.first + 1, 0);

export function listPorts(ranges: readonly PortRange[]): string[] {
  const out: string[] = [];
  for (const { protocol, first, last } of ranges) for (let n = first; n <= last; n++) out.push(`${n}/${protocol}`);
  return out;
}

function merged(list: [number, number][]): [number, number][] {
  const out: [number, number][] = [];
  for (const [first, last] of [...list].sort((a, b) => a[0] - b[0])) {
    const previous = out[out.length - 1];
    if (previous && first <= previous[1] + 1) previous[1] = Math.max(previous[1], last);
    else out.push([first, last]);
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
function hostRange(published: string, env: ReadonlyMap<string, string>): [number, number] | null | 'unresolved' | 'invalid' {
  const text = interpolated(published.trim(), env).trim();
  // Empty (an unset variable, as Compose reads it) or 0: the engine picks the port.
  if (text === '' || text === '0') return null;
  if (text.includes('$')) return 'unresolved';
  const m = /^([1-9]\d{0,4})(?:-([1-9]\d{0,4}))?$/.exec(text);
  if (!m) return 'invalid';
  const first = Number(m[1]);
  const last = m[2] === undefined ? first : Number(m[2]);
  if (last > 65535 || last < first) return 'invalid';
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
