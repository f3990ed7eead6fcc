import type { ComposeTemplate } from '@skiff/domain';
import { CatalogError, type TemplateSummary, blueprintPaths, readCatalogIndex, templateFromFiles } from './compose-templates-catalog.js';
import type { OutboundPolicy } from '@skiff/outbound';
import { CatalogFetchError, fetchCatalogText } from './compose-templates-fetch.js';

export interface RemoteCatalogLimits {
  /** The largest meta.json taken. */
  maxIndexBytes: number;
  /** The largest compose file or template.toml taken. */
  maxFileBytes: number;
  timeoutMs: number;
  /** How long a fetched meta.json is used before it is fetched again. */
  cacheMs: number;
}

/** Why a remote catalog could not be read (the fetch or its content). */
export class RemoteCatalogError extends Error {
  override name = 'RemoteCatalogError';
}

/**
 * A catalog at a URL (layout in compose-templates-catalog.ts). Its meta.json is kept for
 * `cacheMs`; when fetching it again fails, the last good copy is used (and the failure
 * reported through `onStale`), so a catalog that is down for a moment does not empty the list.
 */
export class RemoteCatalog {
  private cached: { entries: TemplateSummary[]; at: number } | null = null;
  private pending: Promise<TemplateSummary[]> | null = null;

  constructor(
    /** Without a trailing slash. */
    readonly baseUrl: string,
    private readonly policy: OutboundPolicy,
    private readonly limits: RemoteCatalogLimits,
    private readonly hooks: { now: () => number; onSkipped?: (problems: string[]) => void; onStale?: (reason: string) => void },
  ) {}

  async entries(): Promise<TemplateSummary[]> {
    const cached = this.cached;
    if (cached && this.hooks.now() - cached.at < this.limits.cacheMs) return cached.entries;
    // Callers arriving while a fetch runs share it.
    this.pending ??= this.refresh().finally(() => {
      this.pending = null;
    });
    try {
      return await this.pending;
    } catch (error) {
      if (!cached) throw error;
      this.hooks.onStale?.((error as Error).message);
      return cached.entries;
    }
  }

  private async refresh(): Promise<TemplateSummary[]> {
    const text = await this.fetch('meta.json', this.limits.maxIndexBytes);
    let read: ReturnType<typeof readCatalogIndex>;
    try {
      read = readCatalogIndex(text, { source: 'remote', strict: false, base: this.baseUrl });
    } catch (error) {
      throw new RemoteCatalogError(`${this.baseUrl}/meta.json: ${(error as CatalogError).message}`);
    }
    if (read.skipped.length > 0) this.hooks.onSkipped?.(read.skipped);
    this.cached = { entries: read.entries, at: this.hooks.now() };
    return read.entries;
  }

  /** A template's files, fetched now. A template the catalog does not list is null. */
  async template(id: string): Promise<ComposeTemplate | null> {
    if (!(await this.entries()).some((e) => e.id === id)) return null;
    const paths = blueprintPaths(id);
    const [compose, config] = await Promise.all([
      this.fetch(paths.compose, this.limits.maxFileBytes),
      this.fetch(paths.config, this.limits.maxFileBytes),
    ]);
    return templateFromFiles(compose, config);
  }

  private async fetch(path: string, maxBytes: number): Promise<string> {
    try {
      return await fetchCatalogText(`${this.baseUrl}/${path}`, { maxBytes, timeoutMs: this.limits.timeoutMs, policy: this.policy });
    } catch (error) {
      if (error instanceof CatalogFetchError) throw new RemoteCatalogError(`${this.baseUrl}/${path}: ${error.message}`);
      throw error;
    }
  }
}
