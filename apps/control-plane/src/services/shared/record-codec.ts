import type { SecretBox } from '../../crypto/secret-box.js';

/** `password` → `hasPassword`: how a write-only field shows in a response. */
export const flagOf = (field: string) => `has${field[0]!.toUpperCase()}${field.slice(1)}`;

export interface CodecSpec {
  /** The API name of the row's `id` column (`applicationId`, …). */
  idField: string;
  /** Encrypted at rest, returned in clear. */
  sealed?: readonly string[];
  /** Encrypted at rest, never returned: the response carries `has<Field>` instead. */
  writeOnly?: readonly string[];
  /** Stored as jsonb. */
  json?: readonly string[];
  /** Columns kept out of responses altogether (internal bookkeeping). */
  hidden?: readonly string[];
  /** Text fields stored as '' when given null (dotenv text: null means "nothing"). */
  blankWhenNull?: readonly string[];
}

/**
 * Turns API values into column values (sealing secrets, encoding JSON) and rows into
 * records (opening secrets, hiding write-only ones, ISO dates, `id` renamed).
 */
export class RecordCodec<R = Record<string, unknown>> {
  private readonly sealed: Set<string>;
  private readonly writeOnly: Set<string>;
  private readonly json: Set<string>;
  private readonly hidden: Set<string>;
  private readonly blankWhenNull: Set<string>;

  constructor(
    private readonly secrets: SecretBox,
    readonly spec: CodecSpec,
  ) {
    this.sealed = new Set(spec.sealed);
    this.writeOnly = new Set(spec.writeOnly);
    this.json = new Set(spec.json);
    this.hidden = new Set(spec.hidden);
    this.blankWhenNull = new Set(spec.blankWhenNull);
  }

  /** Column values for the fields given; `undefined` fields are left out (unchanged). */
  columns(values: Record<string, unknown>): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const [key, given] of Object.entries(values)) {
      if (given === undefined) continue;
      const value = given === null && this.blankWhenNull.has(key) ? '' : given;
      if (this.sealed.has(key) || this.writeOnly.has(key)) {
        out[key] = value === null ? null : this.secrets.seal(String(value));
      } else if (this.json.has(key)) {
        out[key] = value === null ? null : JSON.stringify(value);
      } else {
        out[key] = value;
      }
    }
    return out;
  }

  record(row: object): R {
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(row as Record<string, unknown>)) {
      if (this.hidden.has(key)) continue;
      if (key === 'id') out[this.spec.idField] = value;
      else if (this.writeOnly.has(key)) out[flagOf(key)] = value !== null && value !== '';
      else if (this.sealed.has(key)) out[key] = typeof value === 'string' ? this.secrets.open(value) : value;
      else if (value instanceof Date) out[key] = value.toISOString();
      else out[key] = value;
    }
    return out as R;
  }
}
