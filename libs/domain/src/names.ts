import { randomBytes } from 'node:crypto';
import { trimChar } from './trim.js';

/** 6 hex characters, the suffix of generated names. */
export const nameSuffix = () => randomBytes(3).toString('hex');

/** A fresh app name for a copy: the original without an earlier copy suffix, plus 6 hex (≤ 63 chars). */
export function copyAppName(appName: string, suffix = nameSuffix()): string {
  const base = appName.replace(/-[0-9a-f]{6}$/, '').slice(0, 56);
  return `${base}-${suffix}`;
}

/** An app name drawn from a display name: lower-case letters, digits and hyphens, plus 6 hex. */
export function appNameFrom(name: string, suffix = nameSuffix()): string {
  const dashed = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-');
  const base = trimChar(trimChar(dashed, '-').slice(0, 56), '-', 'end');
  return `${base || 'app'}-${suffix}`;
}
