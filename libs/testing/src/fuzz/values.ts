import type { IdPool } from './ids.js';
import { type Schema, resolve, typesOf } from './operations.js';
import type { Random } from './random.js';

/** JSON text sent as it is (numbers JSON.stringify cannot write, deep nesting). */
export class Raw {
  constructor(readonly text: string) {}
}

/** JSON text of a value with `Raw` parts; own `__proto__` keys are written like any other. */
export function toJson(value: unknown): string {
  if (value instanceof Raw) return value.text;
  if (Array.isArray(value)) return `[${value.map(toJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value)
      .map((k) => `${JSON.stringify(k)}:${toJson((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** An object with an own key (`__proto__` included, which a literal would not make own). */
export function withKey(base: Record<string, unknown>, key: string, value: unknown): Record<string, unknown> {
  const out = { ...base };
  Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  return out;
}

const MB = 1 << 20;

/** Strings no field expects: sizes, encodings, paths, injections, look-alikes of other types. */
export const HOSTILE_STRINGS: readonly (() => string)[] = [
  () => '',
  () => ' ',
  () => 'a'.repeat(MB),
  () => 'x'.repeat(70_000),
  () => '\u0000',
  () => 'fuzz\u0000null',
  () => '\u202Egnp.exe\u202C',
  () => '\uD800',
  () => 'x\uDC00y',
  () => '\uFEFFbom',
  () => '😀'.repeat(300),
  () => 'e\u0301\u0301\u0301',
  () => 'ＡＢＣ',
  () => '\r\nX-Injected: 1',
  () => '../../../../etc/passwd',
  () => '..\\..\\..\\windows\\win.ini',
  () => '/etc/shadow',
  () => '%2e%2e%2f%2e%2e%2fetc',
  () => 'file:///etc/passwd',
  () => 'http://169.254.169.254/latest/meta-data/',
  () => '$(id)',
  () => '`id`',
  () => '; rm -rf / #',
  () => '| cat /etc/passwd',
  () => '--help',
  () => "' OR '1'='1",
  () => "'; DROP TABLE users; --",
  () => '" OR ""="',
  () => '\\',
  () => '%s%s%s%n',
  () => '${jndi:ldap://x}',
  () => '{{7*7}}',
  () => '<script>alert(1)</script>',
  () => '__proto__',
  () => 'constructor',
  () => 'NaN',
  () => 'Infinity',
  () => '-0',
  () => '1e308',
  () => 'null',
  () => 'true',
  () => '0x1F',
  () => '[]',
  () => '{}',
];

/** Numbers at the edges: JSON text, so `-0` and the overflowing ones reach the server as written. */
export const HOSTILE_NUMBERS: readonly string[] = [
  '1e308', '-1e308', '1e400', '-1e400', '-0', '0', '-1', '1.5', '0.0000001', '9007199254740993', '-9007199254740993',
  '2147483648', '-2147483649', '4294967296', '1e21', '123456789012345678901234567890', '5e-324',
];

/** Values of the wrong type for any field. */
export const WRONG_TYPES: readonly (() => unknown)[] = [
  () => 0,
  () => -1,
  () => 'text',
  () => true,
  () => false,
  () => [],
  () => ['a', 1, null],
  () => ({}),
  () => ({ a: { b: [1] } }),
  () => [{}],
];

/** `depth` nested arrays (or objects) around a value: more than a recursive walk can take. */
export function deepNesting(depth: number, objects: boolean): Raw {
  return objects ? new Raw('{"a":'.repeat(depth) + '1' + '}'.repeat(depth)) : new Raw('['.repeat(depth) + ']'.repeat(depth));
}

export function hostileString(r: Random): string {
  return r.pick(HOSTILE_STRINGS)();
}

const STRING_CANDIDATES = ['fuzz-1', 'main', 'bucket-one', 'fuzz@example.com', '123', 'a', 'fuzz_x.y'];

/**
 * A value the schema accepts (as far as a JSON Schema says: services check more), with known
 * ids for id fields. `field` is the property's name.
 */
export function validValue(schema: Schema, root: Schema, r: Random, ids: IdPool, field: string, depth = 0): unknown {
  const s = resolve(schema, root);
  const variants = s.anyOf ?? s.oneOf;
  if (variants && variants.length) {
    const nonNull = variants.filter((v) => !typesOf(v, root).has('null') || typesOf(v, root).size > 1);
    const choice = nonNull.length && !r.chance(0.15) ? r.pick(nonNull) : r.pick(variants);
    return validValue(choice, root, r, ids, field, depth);
  }
  if (s.enum?.length) return r.pick(s.enum);
  if (s.const !== undefined) return s.const;
  const types = [...typesOf(s, root)];
  const type = types.length > 1 && types.includes('null') && r.chance(0.8) ? types.filter((t) => t !== 'null')[0]! : r.pick(types);
  switch (type) {
    case 'null':
      return null;
    case 'boolean':
      return r.chance(0.5);
    case 'number': {
      const min = s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + 1 : 0);
      const max = s.maximum ?? (s.exclusiveMaximum !== undefined ? s.exclusiveMaximum - 1 : Math.max(min, 1000));
      return r.int(Math.ceil(min), Math.floor(Math.min(max, min + 100_000)));
    }
    case 'string':
      return validString(s, r, ids, field);
    case 'array': {
      const n = r.int(s.minItems ?? 0, Math.min(s.maxItems ?? 3, (s.minItems ?? 0) + 3));
      return Array.from({ length: depth > 3 ? (s.minItems ?? 0) : n }, () => validValue(s.items ?? {}, root, r, ids, field, depth + 1));
    }
    case 'object':
      return validObject(s, root, r, ids, depth);
    default:
      return r.pick(['any', 1, true, null, { a: 1 }]);
  }
}

export function validObject(schema: Schema, root: Schema, r: Random, ids: IdPool, depth = 0): Record<string, unknown> {
  const s = resolve(schema, root);
  const out: Record<string, unknown> = {};
  const required = new Set(s.required ?? []);
  for (const [key, prop] of Object.entries(s.properties ?? {})) {
    if (required.has(key) || (depth < 4 && r.chance(0.5))) out[key] = validValue(prop, root, r, ids, key, depth + 1);
  }
  if (!s.properties && typeof s.additionalProperties === 'object' && depth < 4) {
    for (let i = r.int(0, 2); i > 0; i--) out[`KEY_${r.int(0, 99)}`] = validValue(s.additionalProperties, root, r, ids, 'value', depth + 1);
  }
  return out;
}

function validString(s: Schema, r: Random, ids: IdPool, field: string): string {
  const known = ids.candidates(field, false);
  if (known.length && r.chance(0.85)) return r.pick(known);
  if (s.format === 'email') return `fuzz${r.int(0, 9999)}@example.com`;
  // Loopback's discard port: a check that connects fails at once, nothing outside is reached.
  if (s.format === 'uri') return `http://127.0.0.1:9/fuzz${r.int(0, 99)}`;
  const min = s.minLength ?? 0;
  const max = s.maxLength ?? 64;
  if (s.pattern) {
    const re = safeRegExp(s.pattern);
    const fits = STRING_CANDIDATES.filter((c) => (!re || re.test(c)) && c.length >= min && c.length <= max);
    if (fits.length) return r.pick(fits);
  }
  if (/host|domain/i.test(field)) return `fuzz${r.int(0, 999)}.example.test`;
  const text = `fuzz-${r.int(0, 99_999)}`;
  return text.length < min ? text.padEnd(min, 'x') : text.slice(0, Math.max(max, min));
}

function safeRegExp(pattern: string): RegExp | null {
  try {
    return new RegExp(pattern, 'u');
  } catch {
    return null;
  }
}
