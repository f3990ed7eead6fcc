/**
 * Compose templates (`compose.processTemplate`, `compose.import`, `compose.deployTemplate`;
 * REFERENCE.md, "Templates"): a compose file plus variables, domains, env and files.
 *
 * Format. The spec only says `base64`; Skiff takes the form templates are commonly shared in
 * by self-hosted platforms, so existing templates import unchanged: base64 (standard or
 * URL-safe alphabet, line breaks allowed) of UTF-8 JSON
 *
 *   {"compose": "<compose YAML>", "config": "<TOML text>" | {…the same as a JSON object…}}
 *
 * where the config (TOML or JSON) is
 *
 *   [variables]                      # name = value; values may use helpers and ${other}
 *   main_domain = "${domain}"
 *   db_password = "${password:32}"
 *
 *   [config]
 *   env = ["DB_PASSWORD=${db_password}"]   # or a table: [config.env] DB_PASSWORD = "…"
 *   [[config.domains]]                     # serviceName, port, optional host and path
 *   serviceName = "web"
 *   port = 80
 *   host = "${main_domain}"                # no host: a generated domain
 *   [[config.mounts]]                      # files written beside the compose file
 *   filePath = "config/app.conf"
 *   content = "…"
 *
 * References, `${…}`:
 * - `${name}`: a variable (variables may use each other, in any order; a loop is refused);
 *   in `env`, also another env entry of the template;
 * - helpers, a fresh value at each occurrence (a variable keeps one value wherever used):
 *   `${password}` / `${password:N}` N letters and digits (default 32), `${base64}` /
 *   `${base64:N}` N random bytes in base64 (default 32), `${hash}` / `${hash:N}` N hex
 *   characters (default 8), N from 1 to 256; `${uuid}` a random UUID v4; `${domain}` a
 *   generated domain (the caller's generator, REFERENCE.md "Generated domains");
 * - in variables, env, domain hosts and paths anything else is refused with its place and
 *   reason (an unknown helper, N out of range or not a number, an unknown variable, a shell
 *   form like `${X:-y}`): the `.env` Skiff writes is read literally, so a reference left
 *   there would reach the container as text. In mount contents (configuration files that
 *   have `${…}` syntaxes of their own) only variables and helpers are replaced; other `${…}`
 *   stay as written. Skiff's own `${{project.X}}` references pass through everywhere.
 * - The compose text itself is not processed: its `${VAR}` are Compose's, filled from the
 *   stack's `.env` (the template's env).
 *
 * Randomness comes from the injected `randomBytes`, so tests are deterministic; passwords and
 * hashes draw characters without modulo bias.
 */
import { parse as parseToml } from 'smol-toml';
import { composeServiceNames, parseCompose } from './compose-file.js';
import { ComposeError } from './yaml-nodes.js';
import { TemplateError } from './template-error.js';
import {
  TEMPLATE_HELPERS,
  type TemplateDomainSpec,
  type TemplateMount,
  isRecord,
  optionalRecord,
  readDomains,
  readEnv,
  readMounts,
  readVariables,
} from './template-fields.js';

export { TEMPLATE_HELPERS, type TemplateDomainSpec, type TemplateMount, TemplateError };




export interface TemplateConfig {
  /** In declaration order. */
  variables: [string, string][];
  domains: TemplateDomainSpec[];
  env: [string, string][];
  mounts: TemplateMount[];
}

export interface ComposeTemplate {
  compose: string;
  config: TemplateConfig;
}

export interface TemplateRuntime {
  /** Cryptographically random bytes (`crypto.randomBytes` in production). */
  randomBytes: (size: number) => Uint8Array;
  /** A fresh generated domain; needed only by templates that use `${domain}` or omit a host. */
  generateDomain?: () => string;
}

export interface TemplateDomain {
  serviceName: string;
  port: number;
  host: string;
  path: string | null;
}

export interface ProcessedTemplate {
  /** The template's compose text, checked, unchanged. */
  compose: string;
  /** The stack's `env`: dotenv text as Skiff's dotenv parser reads it. */
  env: string;
  domains: TemplateDomain[];
  mounts: TemplateMount[];
}

/** Largest decoded template accepted. */
export const MAX_TEMPLATE_BYTES = 1024 * 1024;


/** Decodes and checks a base64 template (format in the module comment). */
export function decodeTemplate(base64: string): ComposeTemplate {
  const compact = base64.replace(/\s+/g, '');
  if (compact === '') throw new TemplateError('the template is empty');
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(compact) || compact.length % 4 === 1) {
    throw new TemplateError('the template is not base64');
  }
  if (Math.floor((compact.length * 3) / 4) > MAX_TEMPLATE_BYTES + 3) {
    throw new TemplateError(`the template is larger than ${MAX_TEMPLATE_BYTES} bytes`);
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(compact, 'base64'));
  } catch {
    throw new TemplateError('the decoded template is not UTF-8 text');
  }
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    throw new TemplateError('the decoded template is not JSON ({"compose": …, "config": …})');
  }
  if (!isRecord(document)) throw new TemplateError('the template must be a JSON object with "compose" and "config"');
  const { compose, config } = document;
  if (typeof compose !== 'string' || compose.trim() === '') throw new TemplateError('the template has no "compose" text');
  return { compose, config: parseTemplateConfig(config ?? {}) };
}

/** Reads a template config given as TOML text or as the equivalent object. */
export function parseTemplateConfig(raw: unknown): TemplateConfig {
  let source = raw;
  if (typeof raw === 'string') {
    try {
      source = parseToml(raw);
    } catch (error) {
      const message = error instanceof Error ? error.message.split('\n')[0] : String(error);
      throw new TemplateError(`the template's config is not valid TOML: ${message}`);
    }
  }
  if (!isRecord(source)) throw new TemplateError('the template\'s config must be TOML text or an object');
  const config = optionalRecord(source.config, 'config');
  return {
    variables: readVariables(source.variables),
    domains: readDomains(config.domains),
    env: readEnv(config.env),
    mounts: readMounts(config.mounts),
  };
}

/** Resolves the variables and helpers of a template (see the module comment). */
export function processTemplate(template: ComposeTemplate, runtime: TemplateRuntime): ProcessedTemplate {
  let services: string[];
  try {
    services = composeServiceNames(parseCompose(template.compose));
  } catch (error) {
    if (error instanceof ComposeError) throw new TemplateError(`the template's compose file: ${error.message}`);
    throw error;
  }
  const resolver = new Resolver(template.config, runtime);
  for (const [name] of template.config.variables) resolver.variable(name);
  const domains = template.config.domains.map((domain, index) => {
    const where = `config.domains[${index}]`;
    if (!services.includes(domain.serviceName)) {
      throw new TemplateError(`${where}.serviceName: service "${domain.serviceName}" is not in the template's compose file`);
    }
    const host = domain.host === null || domain.host.trim() === '' ? resolver.domain(`${where}.host`) : resolver.expand(domain.host, `${where}.host`, 'strict');
    const path = domain.path === null ? null : resolver.expand(domain.path, `${where}.path`, 'strict');
    if (!/^[A-Za-z0-9.-]+$/.test(host)) throw new TemplateError(`${where}.host: "${host}" is not a host name`);
    if (path !== null && !path.startsWith('/')) throw new TemplateError(`${where}.path must start with "/"`);
    return { serviceName: domain.serviceName, port: domain.port, host: host.toLowerCase(), path };
  });
  const env = template.config.env.map(([name]) => [name, resolver.env(name)] as const);
  const mounts = template.config.mounts.map((mount, index) => ({
    filePath: mount.filePath,
    content: resolver.expand(mount.content, `config.mounts[${index}].content`, 'lenient'),
  }));
  return { compose: template.compose, env: formatDotenvText(env), domains, mounts };
}

/** `NAME=value` lines that Skiff's dotenv parser (dotenv.ts) reads back exactly. */
export function formatDotenvText(entries: Iterable<readonly [string, string]>): string {
  let out = '';
  for (const [name, value] of entries) out += `${name}=${dotenvValue(value)}\n`;
  return out;
}

function dotenvValue(value: string): string {
  if (/^(?:[^\s'"#\\][^\s#]*)?$/.test(value)) return value;
  const escaped = value.replace(/[\\"\n\r\t]/g, (c) => ({ '\\': '\\\\', '"': '\\"', '\n': '\\n', '\r': '\\r', '\t': '\\t' })[c] as string);
  return `"${escaped}"`;
}

type Mode = 'strict' | 'lenient';

const REFERENCE = /\$\{([^{}]*)\}/g;
const REFERENCE_BODY = /^([A-Za-z_][A-Za-z0-9_]*)(?::(.*))?$/s;
const HELPER_RANGE = { min: 1, max: 256 };
const PASSWORD_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const MAX_DEPTH = 64;

class Resolver {
  private readonly rawVariables: Map<string, string>;
  private readonly rawEnv: Map<string, string>;
  private readonly resolvedVariables = new Map<string, string>();
  private readonly resolvedEnv = new Map<string, string>();
  private readonly chain: string[] = [];

  constructor(
    config: TemplateConfig,
    private readonly runtime: TemplateRuntime,
  ) {
    this.rawVariables = new Map(config.variables);
    this.rawEnv = new Map(config.env);
  }

  variable(name: string): string {
    return this.memo(this.resolvedVariables, this.rawVariables, name, `variables.${name}`, 'variables');
  }

  env(name: string): string {
    return this.memo(this.resolvedEnv, this.rawEnv, name, `config.env.${name}`, 'env');
  }

  domain(where: string): string {
    if (!this.runtime.generateDomain) throw new TemplateError(`${where}: a generated domain is needed but none can be generated here`);
    return this.runtime.generateDomain();
  }

  /** Replaces the references of `text`; `env` also lets `${NAME}` name another env entry. */
  expand(text: string, where: string, mode: Mode, scope: 'variables' | 'env' | 'other' = 'other'): string {
    return text.replace(REFERENCE, (whole, body: string) => {
      const match = REFERENCE_BODY.exec(body);
      if (!match) {
        if (mode === 'lenient') return whole;
        throw new TemplateError(`${where}: unsupported reference ${whole} (use \${variable} or a helper)`);
      }
      const [, name, argument] = match;
      if (argument === undefined && this.rawVariables.has(name)) return this.variable(name);
      if ((TEMPLATE_HELPERS as readonly string[]).includes(name)) return this.helper(name, argument, where, whole);
      if (argument === undefined && scope === 'env' && this.rawEnv.has(name)) return this.env(name);
      if (mode === 'lenient') return whole;
      if (argument !== undefined) {
        throw new TemplateError(`${where}: unknown helper "${name}" in ${whole} (helpers: ${TEMPLATE_HELPERS.join(', ')})`);
      }
      throw new TemplateError(`${where}: unknown variable "${name}" in ${whole}`);
    });
  }

  private memo(cache: Map<string, string>, raw: Map<string, string>, name: string, where: string, scope: 'variables' | 'env'): string {
    const done = cache.get(name);
    if (done !== undefined) return done;
    const text = raw.get(name) as string;
    const key = `${scope}.${name}`;
    const seen = this.chain.indexOf(key);
    if (seen >= 0) throw new TemplateError(`references loop: ${[...this.chain.slice(seen), key].join(' -> ')}`);
    if (this.chain.length >= MAX_DEPTH) throw new TemplateError(`${where}: references nest deeper than ${MAX_DEPTH} levels`);
    this.chain.push(key);
    const value = this.expand(text, where, 'strict', scope);
    this.chain.pop();
    cache.set(name, value);
    return value;
  }

  private helper(name: string, argument: string | undefined, where: string, whole: string): string {
    if (name === 'uuid' || name === 'domain') {
      if (argument !== undefined) throw new TemplateError(`${where}: the helper "${name}" takes no argument (${whole})`);
      return name === 'uuid' ? this.uuid() : this.domain(where);
    }
    const size = argument === undefined ? (name === 'hash' ? 8 : 32) : Number(argument);
    if (argument !== undefined && (!/^[0-9]+$/.test(argument) || size < HELPER_RANGE.min || size > HELPER_RANGE.max)) {
      throw new TemplateError(`${where}: in ${whole}, N must be a whole number from ${HELPER_RANGE.min} to ${HELPER_RANGE.max}`);
    }
    if (name === 'password') return this.password(size);
    if (name === 'base64') return Buffer.from(this.bytes(size)).toString('base64');
    return Buffer.from(this.bytes(Math.ceil(size / 2))).toString('hex').slice(0, size);
  }

  private bytes(size: number): Uint8Array {
    const bytes = this.runtime.randomBytes(size);
    if (bytes.length !== size) throw new Error(`randomBytes(${size}) returned ${bytes.length} bytes`);
    return bytes;
  }

  /** Letters and digits, drawn without modulo bias (bytes of 248 and more are skipped). */
  private password(size: number): string {
    const limit = 256 - (256 % PASSWORD_ALPHABET.length);
    let out = '';
    while (out.length < size) {
      for (const byte of this.bytes(size - out.length + 8)) {
        if (byte >= limit) continue;
        out += PASSWORD_ALPHABET[byte % PASSWORD_ALPHABET.length];
        if (out.length === size) break;
      }
    }
    return out;
  }

  private uuid(): string {
    const b = Uint8Array.from(this.bytes(16));
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    const hex = Buffer.from(b).toString('hex');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }
}
