/** `KEY=value` lines of a dotenv text, by key (comments and blank lines skipped; the last one wins). */
export function parseDotenv(text: string): Map<string, string> {
  const vars = new Map<string, string>();
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.replace(/^\s*export\s+/, '');
    if (!line.trim() || line.trimStart().startsWith('#')) continue;
    const eq = line.indexOf('=');
    if (eq <= 0) continue;
    vars.set(line.slice(0, eq).trim(), line.slice(eq + 1));
  }
  return vars;
}

export interface EnvChange {
  key: string;
  change: 'added' | 'changed' | 'removed';
}

/** What replacing one dotenv text by another changes, key by key (values are not shown: they may be secrets). */
export function diffDotenv(before: string, after: string): EnvChange[] {
  const a = parseDotenv(before);
  const b = parseDotenv(after);
  const changes: EnvChange[] = [];
  for (const [key, value] of b) {
    if (!a.has(key)) changes.push({ key, change: 'added' });
    else if (a.get(key) !== value) changes.push({ key, change: 'changed' });
  }
  for (const key of a.keys()) if (!b.has(key)) changes.push({ key, change: 'removed' });
  return changes;
}

/** Names whose values are treated as secrets by `skiff export` (left out of the file). */
export const SECRET_KEY = /(PASSWORD|PASSWD|SECRET|TOKEN|API_?KEY|PRIVATE|CREDENTIAL|_KEY$|^KEY$|DSN|DATABASE_URL|CONNECTION_STRING)/i;
