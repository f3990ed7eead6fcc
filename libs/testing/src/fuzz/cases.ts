import type { IdPool } from './ids.js';
import { type FuzzOperation, type Schema, resolve, typesOf } from './operations.js';
import type { Random } from './random.js';
import { HOSTILE_NUMBERS, Raw, WRONG_TYPES, deepNesting, hostileString, toJson, validObject, withKey } from './values.js';

export interface FuzzCase {
  operation: FuzzOperation;
  /** What was done to the valid input. */
  kind: string;
  /** The query string (GET) or the body (POST), as sent. */
  query?: string;
  body?: string | Uint8Array | FormData;
}

const MUTATIONS = [
  'missing', 'null', 'wrongType', 'hostileString', 'hostileString', 'hostileString', 'hostileNumber', 'proto', 'arrayForObject',
  'deep', 'unknownField', 'rawBody', 'everyField',
] as const;

const PROTO_KEYS = ['__proto__', 'constructor', 'prototype'];
const ODD_KEYS = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', '$where', '', '\u0000', 'a.b', 'k'.repeat(10_000)];

/** Whether an operation removes records: it gets only ids of records the run made. */
export const removes = (op: FuzzOperation) => /(?:^|\.)(?:remove|delete)|Delete|Remove/.test(op.name);

/** One request for an operation: valid about one time in four, hostile otherwise. */
export function makeCase(op: FuzzOperation, r: Random, ids: IdPool): FuzzCase {
  const root = op.input;
  const valid = validInput(op, r, ids);
  if (r.chance(0.25)) return encode(op, 'valid', valid, r);
  const kind = r.pick(MUTATIONS);
  const fields = Object.keys(resolve(root, root).properties ?? {});
  const field = fields.length ? r.pick(fields) : 'field';
  const schemaOf = (f: string): Schema => resolve(root, root).properties?.[f] ?? {};
  switch (kind) {
    case 'missing': {
      const required = resolve(root, root).required ?? [];
      const out = { ...valid };
      if (required.length && r.chance(0.7)) delete out[r.pick(required)];
      else for (const k of Object.keys(out)) delete out[k];
      return encode(op, kind, out, r);
    }
    case 'null':
      return encode(op, `${kind} ${field}`, { ...valid, [field]: null }, r);
    case 'wrongType':
      return encode(op, `${kind} ${field}`, { ...valid, [field]: r.pick(WRONG_TYPES)() }, r);
    case 'hostileString': {
      const strings = fields.filter((f) => typesOf(schemaOf(f), root).has('string'));
      const f = strings.length && r.chance(0.8) ? r.pick(strings) : field;
      const value = hostileString(r);
      const inArray = typesOf(schemaOf(f), root).has('array') && r.chance(0.5);
      return encode(op, `${kind} ${f}`, { ...valid, [f]: inArray ? [value] : value }, r);
    }
    case 'hostileNumber': {
      const numbers = fields.filter((f) => typesOf(schemaOf(f), root).has('number'));
      const f = numbers.length ? r.pick(numbers) : field;
      return encode(op, `${kind} ${f}`, { ...valid, [f]: new Raw(r.pick(HOSTILE_NUMBERS)) }, r);
    }
    case 'proto': {
      const payload = { isPlatformAdmin: true, role: 'owner', organizationId: 'org_other', polluted: 'yes' };
      const objects = fields.filter((f) => typesOf(schemaOf(f), root).has('object'));
      if (objects.length && r.chance(0.5)) {
        const f = r.pick(objects);
        const inner = typeof valid[f] === 'object' && valid[f] !== null && !Array.isArray(valid[f]) ? (valid[f] as Record<string, unknown>) : {};
        return encode(op, `${kind} ${f}`, { ...valid, [f]: withKey(inner, r.pick(PROTO_KEYS), payload) }, r);
      }
      return encode(op, kind, withKey(valid, r.pick(PROTO_KEYS), payload), r);
    }
    case 'arrayForObject': {
      const objects = fields.filter((f) => typesOf(schemaOf(f), root).has('object'));
      if (objects.length && r.chance(0.5)) {
        const f = r.pick(objects);
        return encode(op, `${kind} ${f}`, { ...valid, [f]: [valid[f] ?? {}] }, r);
      }
      return op.method === 'GET' ? encode(op, kind, { ...valid, [field]: [valid[field] ?? 'a', 'b', 'c'] }, r) : { operation: op, kind: 'array body', body: toJson([valid]) };
    }
    case 'deep': {
      const depth = r.pick([64, 2_000, 100_000]);
      return encode(op, `${kind} ${field} ${depth}`, { ...valid, [field]: deepNesting(depth, r.chance(0.5)) }, r);
    }
    case 'unknownField':
      return encode(op, kind, withKey(valid, r.pick(ODD_KEYS), hostileString(r)), r);
    case 'rawBody':
      return rawCase(op, valid, r);
    case 'everyField': {
      const out: Record<string, unknown> = {};
      for (const f of fields) out[f] = r.chance(0.5) ? hostileString(r) : r.pick(WRONG_TYPES)();
      return encode(op, kind, out, r);
    }
  }
}

function validInput(op: FuzzOperation, r: Random, ids: IdPool): Record<string, unknown> {
  const root = op.input;
  const input = validObject(root, root, r, ids);
  // Removals get ids of records the run made, or none that exist.
  if (removes(op)) {
    for (const [key, value] of Object.entries(input)) {
      if (typeof value !== 'string') continue;
      const made = ids.candidates(key, true);
      input[key] = made.length ? r.pick(made) : `${key}-none`;
    }
  }
  if (op.upload) delete input[uploadFieldOf(op) ?? ''];
  return input;
}

/** The file part of an upload operation: the one property of its multipart schema that is binary. */
function uploadFieldOf(op: FuzzOperation): string | undefined {
  return Object.entries(op.input.properties ?? {}).find(([, s]) => s.contentMediaType === 'application/octet-stream')?.[0];
}

/** The case as sent: a query string, a JSON body, or (for uploads, sometimes) a multipart body. */
function encode(op: FuzzOperation, kind: string, input: Record<string, unknown>, r: Random): FuzzCase {
  if (op.method === 'GET') return { operation: op, kind, query: queryOf(input) };
  if (op.upload && r.chance(0.5)) {
    const form = new FormData();
    for (const [k, v] of Object.entries(input)) form.append(k, typeof v === 'string' ? v : toJson(v));
    const file = uploadFieldOf(op);
    if (file) form.append(file, new Blob([randomBytes(r, r.int(0, 4096))]), r.pick(['a.zip', 'a.tar.gz', '../../x.zip', 'x']));
    return { operation: op, kind: `${kind} multipart`, body: form };
  }
  return { operation: op, kind, body: toJson(input) };
}

function queryOf(input: Record<string, unknown>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(input)) {
    for (const item of Array.isArray(v) ? v : [v]) q.append(k, typeof item === 'string' ? item : item instanceof Raw ? item.text : toJson(item));
  }
  return q.toString();
}

function rawCase(op: FuzzOperation, valid: Record<string, unknown>, r: Random): FuzzCase {
  if (op.method === 'GET') {
    const first = Object.keys(valid)[0] ?? 'id';
    const query = r.pick(['%', '%E0%A4%A', '=', '&&&', `${first}=%00`, `${first}=a&${first}=b&${first}=c`, `${first}[]=a`, `${first}[a]=1`, '__proto__[x]=1', `${first}=${'%FF'.repeat(10)}`]);
    return { operation: op, kind: `raw query ${query.slice(0, 30)}`, query };
  }
  const json = toJson(valid);
  const bodies: (string | Uint8Array)[] = [
    '', 'null', '"text"', '1e400', 'true', '{', '{"a":1,}', `${json}${json}`, json.replace(/^\{/, '{"a":1,"a":{"b":2},'), '\u0000',
    `{"x":"${'\\u0000'.repeat(10)}"}`, new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]), ' '.repeat(1000) + json,
  ];
  const body = r.pick(bodies);
  return { operation: op, kind: `raw body ${typeof body === 'string' ? JSON.stringify(body.slice(0, 20)) : 'bytes'}`, body };
}

function randomBytes(r: Random, n: number): Uint8Array {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = r.int(0, 255);
  return out;
}

