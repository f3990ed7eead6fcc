/** The fields of a template's config, read and checked one by one (template.ts). */
import { isEnvName } from '../dotenv.js';
import { TemplateError } from './template-error.js';

export const TEMPLATE_HELPERS = ['password', 'base64', 'hash', 'uuid', 'domain'] as const;

export interface TemplateDomainSpec {
  serviceName: string;
  port: number;
  /** Null: a generated domain. */
  host: string | null;
  path: string | null;
}

export interface TemplateMount {
  /** Relative to the stack's files directory, normalised (`a/b.conf`). */
  filePath: string;
  content: string;
}

export function readVariables(raw: unknown): [string, string][] {
  const table = optionalRecord(raw, 'variables');
  return Object.entries(table).map(([name, value]) => {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
      throw new TemplateError(`variables: "${name}" is not a valid name (letters, digits and _, not starting with a digit)`);
    }
    if ((TEMPLATE_HELPERS as readonly string[]).includes(name)) {
      throw new TemplateError(`variables: "${name}" is the name of a helper; choose another name`);
    }
    return [name, scalar(value, `variables.${name}`)];
  });
}

export function readDomains(raw: unknown): TemplateDomainSpec[] {
  return optionalArray(raw, 'config.domains').map((item, index) => {
    const where = `config.domains[${index}]`;
    if (!isRecord(item)) throw new TemplateError(`${where} must be a table with serviceName and port`);
    if (typeof item.serviceName !== 'string' || item.serviceName === '') throw new TemplateError(`${where}.serviceName must be a service name`);
    const port = item.port;
    if (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535) {
      throw new TemplateError(`${where}.port must be a whole number from 1 to 65535`);
    }
    const host = item.host === undefined || item.host === null ? null : text(item.host, `${where}.host`);
    const path = item.path === undefined || item.path === null ? null : text(item.path, `${where}.path`);
    return { serviceName: item.serviceName, port, host, path };
  });
}

export function readEnv(raw: unknown): [string, string][] {
  const entries: [string, string][] = [];
  if (Array.isArray(raw)) {
    raw.forEach((item, index) => {
      const line = text(item, `config.env[${index}]`);
      const eq = line.indexOf('=');
      if (eq < 0) throw new TemplateError(`config.env[${index}] must be NAME=value`);
      entries.push([line.slice(0, eq).trim(), line.slice(eq + 1)]);
    });
  } else {
    for (const [name, value] of Object.entries(optionalRecord(raw, 'config.env'))) entries.push([name, scalar(value, `config.env.${name}`)]);
  }
  const seen = new Set<string>();
  for (const [name] of entries) {
    if (!isEnvName(name)) throw new TemplateError(`config.env: "${name}" is not a valid variable name`);
    if (seen.has(name)) throw new TemplateError(`config.env: "${name}" is given twice`);
    seen.add(name);
  }
  return entries;
}

export function readMounts(raw: unknown): TemplateMount[] {
  return optionalArray(raw, 'config.mounts').map((item, index) => {
    const where = `config.mounts[${index}]`;
    if (!isRecord(item)) throw new TemplateError(`${where} must be a table with filePath and content`);
    return { filePath: mountPath(text(item.filePath, `${where}.filePath`), where), content: text(item.content ?? '', `${where}.content`) };
  });
}

/** A path inside the stack's files directory: no `..`, no empty or `.` segment, none over 255 bytes, no backslash or NUL. */
export function mountPath(raw: string, where: string): string {
  const path = raw.replace(/^(?:\.\/|\/)+/, '');
  const segments = path.split('/');
  const bad =
    path === '' ||
    path.length > 1024 ||
    /[\\\0]/.test(path) ||
    segments.some((segment) => segment === '' || segment === '.' || segment === '..' || new TextEncoder().encode(segment).length > 255);
  if (bad) throw new TemplateError(`${where}.filePath must be a relative path inside the stack's directory`);
  return path;
}

export function scalar(value: unknown, where: string): string {
  if (typeof value === 'string') return value;
  if ((typeof value === 'number' && Number.isFinite(value)) || typeof value === 'boolean') return String(value);
  throw new TemplateError(`${where} must be a string, a number or a boolean`);
}

export function text(value: unknown, where: string): string {
  if (typeof value !== 'string') throw new TemplateError(`${where} must be a string`);
  return value;
}

export function optionalRecord(value: unknown, where: string): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (!isRecord(value)) throw new TemplateError(`${where} must be a table`);
  return value;
}

export function optionalArray(value: unknown, where: string): unknown[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new TemplateError(`${where} must be a list`);
  return value;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);
}
