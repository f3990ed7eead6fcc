/**
 * A backup's `metadata`: free-form JSON, sealed at rest as a whole. The database passwords a
 * compose backup's metadata carries are write-only: answers replace each one (at any depth)
 * with `has<Name>: true`, an update that leaves one out keeps the stored value at that place,
 * and `null` removes it. The runner opens the stored value itself (`openBackupMetadata`).
 */
import type { SecretBox } from '../../crypto/secret-box.js';

export const SECRET_METADATA_KEYS: readonly string[] = ['databasePassword', 'databaseRootPassword'];

const flagOf = (key: string) => `has${key[0]!.toUpperCase()}${key.slice(1)}`;
const FLAGS = new Set(SECRET_METADATA_KEYS.map(flagOf));
const isSecret = (key: string) => SECRET_METADATA_KEYS.includes(key);

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
const isObject = (v: unknown): v is Record<string, Json> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The metadata as answers show it: every secret replaced by its `has…` flag. */
export function answeredMetadata(value: Json): Json {
  if (Array.isArray(value)) return value.map(answeredMetadata);
  if (!isObject(value)) return value;
  const out: Record<string, Json> = {};
  for (const [key, v] of Object.entries(value)) {
    if (isSecret(key)) out[flagOf(key)] = v !== null && v !== '';
    else if (!FLAGS.has(key)) out[key] = answeredMetadata(v);
  }
  return out;
}

/**
 * What an update stores: `next` as given, without `has…` flags (they are answers, not input),
 * and with each secret it leaves out taken from `stored` at the same place (an object under
 * the same keys). A secret given as null is removed.
 */
export function mergedMetadata(next: Json, stored: Json | undefined): Json {
  if (Array.isArray(next)) return next.map((v, i) => mergedMetadata(v, Array.isArray(stored) ? stored[i] : undefined));
  if (!isObject(next)) return next;
  const before = isObject(stored) ? stored : {};
  const out: Record<string, Json> = {};
  for (const [key, v] of Object.entries(next)) {
    if (FLAGS.has(key)) continue;
    if (isSecret(key)) {
      if (v !== null) out[key] = v;
    } else out[key] = mergedMetadata(v, before[key]);
  }
  for (const key of SECRET_METADATA_KEYS) {
    if (!(key in next) && key in before) out[key] = before[key]!;
  }
  return out;
}

/** The stored metadata, secrets included (for the runner); null when there is none. */
export function openBackupMetadata(secrets: SecretBox, sealed: string | null): Json {
  return sealed === null ? null : (JSON.parse(secrets.open(sealed)) as Json);
}
