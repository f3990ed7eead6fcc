/**
 * Template catalogs. The bundled one (apps/control-plane/templates) and a remote one share a
 * layout, the one self-hosted platforms commonly publish their templates in, so an existing
 * catalog can be named as is:
 *
 *   meta.json                          [{id, name, version, description, tags, logo?, links?}, …]
 *   blueprints/<id>/docker-compose.yml the compose file
 *   blueprints/<id>/template.toml      the template config (libs/domain compose/template.ts)
 *
 * The bundled catalog is read and checked once at start: a broken entry stops the start with
 * its reason. In a remote catalog, entries that are not valid are skipped (and logged), and a
 * template's files are checked when it is deployed.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ComposeTemplate, TemplateError, parseTemplateConfig, processTemplate } from '@skiff/domain';
import { z } from 'zod';

export type TemplateSource = 'bundled' | 'remote';

/** One template as `compose.templates` lists it. */
export interface TemplateSummary {
  id: string;
  name: string;
  version: string;
  description: string;
  tags: string[];
  logo: string | null;
  links: Record<string, string>;
  source: TemplateSource;
}

/** A catalog's content that cannot be used, with the reason. */
export class CatalogError extends Error {
  override name = 'CatalogError';
}

/** Template ids are path segments of the catalog's URLs and directories. */
export const TEMPLATE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

const MAX_ENTRIES = 5000;

const Entry = z.object({
  id: z.string().regex(TEMPLATE_ID, 'must be letters, digits, dot, underscore and hyphen (at most 100)'),
  name: z.string().trim().min(1).max(200),
  version: z.union([z.string().max(100), z.number()]).optional(),
  description: z.string().max(4000).optional(),
  tags: z.array(z.string().trim().min(1).max(60)).max(50).optional(),
  logo: z.string().max(2000).nullable().optional(),
  links: z.record(z.string(), z.unknown()).optional(),
});

export const blueprintPaths = (id: string) => ({
  compose: `blueprints/${id}/docker-compose.yml`,
  config: `blueprints/${id}/template.toml`,
});

/**
 * The entries of a catalog's meta.json. `strict` (the bundled catalog): any invalid entry is
 * an error; otherwise invalid and repeated entries are skipped and named in `skipped`.
 * `base`: the catalog's URL, against which a logo given as a file name is resolved.
 */
export function readCatalogIndex(
  text: string,
  options: { source: TemplateSource; strict: boolean; base?: string },
): { entries: TemplateSummary[]; skipped: string[] } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new CatalogError('meta.json is not JSON');
  }
  if (!Array.isArray(json)) throw new CatalogError('meta.json must be a JSON list of templates');
  if (json.length > MAX_ENTRIES) throw new CatalogError(`meta.json lists more than ${MAX_ENTRIES} templates`);
  const entries: TemplateSummary[] = [];
  const skipped: string[] = [];
  const seen = new Set<string>();
  json.forEach((raw, index) => {
    const parsed = Entry.safeParse(raw);
    const label = typeof (raw as { id?: unknown })?.id === 'string' ? `"${(raw as { id: string }).id}"` : `#${index}`;
    let problem: string | null = null;
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      problem = `template ${label}: ${issue.path.join('.') || 'entry'}: ${issue.message}`;
    } else if (seen.has(parsed.data.id)) {
      problem = `template ${label} is listed twice`;
    }
    if (problem !== null || !parsed.success) {
      if (options.strict) throw new CatalogError(problem!);
      skipped.push(problem!);
      return;
    }
    const e = parsed.data;
    seen.add(e.id);
    entries.push({
      id: e.id,
      name: e.name,
      version: e.version === undefined ? '' : String(e.version),
      description: e.description ?? '',
      tags: [...new Set((e.tags ?? []).map((t) => t.toLowerCase()))],
      logo: logoUrl(e.logo, e.id, options.base),
      links: Object.fromEntries(Object.entries(e.links ?? {}).filter((l): l is [string, string] => isHttpUrl(l[1]))),
      source: options.source,
    });
  });
  return { entries, skipped };
}

/** An http(s) URL as given, or a file name beside the remote template's files; anything else: none. */
function logoUrl(logo: string | null | undefined, id: string, base: string | undefined): string | null {
  if (!logo) return null;
  if (isHttpUrl(logo)) return logo;
  if (base && /^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(logo)) return `${base}/blueprints/${id}/${logo}`;
  return null;
}

function isHttpUrl(value: unknown): value is string {
  return typeof value === 'string' && value.length <= 2000 && /^https?:\/\/[^\s]+$/i.test(value);
}

/** A template's two files, read as a template (the compose text is checked when processed). */
export function templateFromFiles(compose: string, config: string): ComposeTemplate {
  if (compose.trim() === '') throw new TemplateError('docker-compose.yml is empty');
  return { compose, config: parseTemplateConfig(config) };
}

export interface BundledCatalog {
  entries: TemplateSummary[];
  templates: ReadonlyMap<string, ComposeTemplate>;
}

/**
 * Where the bundled catalog is: `apps/control-plane/templates`, found from this module in the
 * sources (src/services/compose) and from the single-file bundle (dist/control-plane/main.mjs).
 */
export function bundledCatalogDir(): string {
  const candidates = ['../../../templates/', '../../apps/control-plane/templates/'].map((p) => fileURLToPath(new URL(p, import.meta.url)));
  const found = candidates.find((dir) => existsSync(join(dir, 'meta.json')));
  if (!found) throw new Error(`the bundled template catalog is missing (looked for meta.json in ${candidates.join(' and ')})`);
  return found;
}

/**
 * Reads the catalog in `dir` and checks every template completely: its entry, its two files,
 * its config, and a trial processing (helpers, variables, the services its domains name).
 * Any problem is an error naming the template.
 */
export async function loadBundledCatalog(dir: string): Promise<BundledCatalog> {
  const fail = (what: string, reason: string) => new Error(`the template catalog in ${dir}: ${what}: ${reason}`);
  let index: string;
  try {
    index = await readFile(join(dir, 'meta.json'), 'utf8');
  } catch (error) {
    throw fail('meta.json', (error as Error).message);
  }
  let entries: TemplateSummary[];
  try {
    entries = readCatalogIndex(index, { source: 'bundled', strict: true }).entries;
  } catch (error) {
    throw fail('meta.json', (error as Error).message);
  }
  const templates = new Map<string, ComposeTemplate>();
  for (const entry of entries) {
    if (entry.logo !== null && !isHttpUrl(entry.logo)) throw fail(entry.id, 'a bundled logo must be an http(s) URL');
    const paths = blueprintPaths(entry.id);
    try {
      const [compose, config] = await Promise.all([readFile(join(dir, paths.compose), 'utf8'), readFile(join(dir, paths.config), 'utf8')]);
      const template = templateFromFiles(compose, config);
      processTemplate(template, { randomBytes: (n) => new Uint8Array(n), generateDomain: () => 'template-check.example.com' });
      templates.set(entry.id, template);
    } catch (error) {
      throw fail(`template "${entry.id}"`, (error as Error).message);
    }
  }
  return { entries, templates };
}
