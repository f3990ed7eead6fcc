import { randomBytes } from 'node:crypto';

/** 6 hex characters, the suffix of generated names. */
export const nameSuffix = () => randomBytes(3).toString('hex');

/** A fresh app name for a copy: the original without an earlier copy suffix, plus 6 hex (≤ 63 chars). */
export function copyAppName(appName: string, suffix = nameSuffix()): string {
  const base = appName.replace(/-[0-9a-f]{6}$/, '').slice(0, 56);
  return `${base}-${suffix}`;
}
