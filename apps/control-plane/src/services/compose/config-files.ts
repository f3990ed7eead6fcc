/**
 * A compose stack's config files (`ai.deploy` configFiles, templates' `config.mounts`): kept
 * sealed with the stack (their text may hold generated passwords), sent with each deploy, and
 * written by the agent beside the compose file, where the file's relative bind mounts
 * (`./nginx.conf:/etc/nginx/nginx.conf:ro`) find them.
 */
import type { SecretBox } from '../../crypto/secret-box.js';

export interface ConfigFile {
  filePath: string;
  content: string;
}

export const MAX_CONFIG_FILES = 20;
export const MAX_CONFIG_FILE_BYTES = 256 * 1024;
const MAX_CONFIG_BYTES = 1024 * 1024;
const MAX_SEGMENT_BYTES = 255;
/** Names the agent writes beside the compose file itself (the file as fetched and as converted, its `.env`). */
const TAKEN = new Set(['docker-compose.yml', 'docker-compose.skiff.yml', '.env']);

/** `./a/b.conf` → `a/b.conf`; other paths unchanged (then checked by configFilesProblem). */
export const cleanConfigPath = (path: string) => path.replace(/^(?:\.\/)+/, '');

/** What is wrong with the files (the first problem, `configFiles[i]…` or the list), or null. */
export function configFilesProblem(files: readonly ConfigFile[]): string | null {
  if (files.length > MAX_CONFIG_FILES) return `at most ${MAX_CONFIG_FILES} files`;
  const seen = new Set<string>();
  let total = 0;
  for (const [index, file] of files.entries()) {
    const at = `configFiles[${index}]`;
    const path = cleanConfigPath(file.filePath);
    const segments = path.split('/');
    if (path === '' || path.length > 1024 || path.startsWith('/') || /[\\\0]/.test(path) || segments.some((s) => s === '' || s === '.' || s === '..')) {
      return `${at}.filePath must be a relative path beside the compose file (no "..", no absolute path)`;
    }
    // What a file system takes as one name: longer fails the deploy on the agent.
    if (segments.some((s) => Buffer.byteLength(s, 'utf8') > MAX_SEGMENT_BYTES)) return `${at}.filePath has a segment longer than ${MAX_SEGMENT_BYTES} bytes`;
    if (TAKEN.has(path)) return `${at}.filePath ${path} is the compose file's own name or its .env`;
    if (seen.has(path)) return `${at}.filePath ${path} is given twice`;
    seen.add(path);
    const bytes = Buffer.byteLength(file.content, 'utf8');
    if (bytes > MAX_CONFIG_FILE_BYTES) return `${at}.content is larger than ${MAX_CONFIG_FILE_BYTES / 1024} KiB`;
    total += bytes;
  }
  if (total > MAX_CONFIG_BYTES) return `the files hold more than ${MAX_CONFIG_BYTES / 1024 / 1024} MiB together`;
  return null;
}

/** The column's value: sealed JSON, or null for none. */
export function sealConfigFiles(secrets: SecretBox, files: readonly ConfigFile[]): string | null {
  if (files.length === 0) return null;
  return secrets.seal(JSON.stringify(files.map((f) => ({ filePath: cleanConfigPath(f.filePath), content: f.content }))));
}

export function openConfigFiles(secrets: SecretBox, sealed: string | null): ConfigFile[] {
  return sealed === null ? [] : (JSON.parse(secrets.open(sealed)) as ConfigFile[]);
}
