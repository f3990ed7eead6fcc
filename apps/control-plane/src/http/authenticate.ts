import type { Principal } from '../authz/principal.js';
import { hashToken } from '../crypto/tokens.js';
import { Unauthorized } from '../errors.js';

export type PrincipalLookup = (keyHash: string) => Promise<Principal | null>;

/** The key a request presents: `x-api-key: <key>` or `Authorization: Bearer <key>`. */
export function presentedKey(headers: { get(name: string): string | undefined | null }): string | null {
  const key = headers.get('x-api-key');
  if (key) return key.trim() || null;
  const auth = headers.get('authorization');
  if (auth && /^bearer\s+/i.test(auth)) return auth.replace(/^bearer\s+/i, '').trim() || null;
  return null;
}

/**
 * Resolves keys to principals, remembering answers for a few seconds so that a busy client
 * costs one database read per key and interval. Any change to identities clears it (locally,
 * and on every control plane through services/identity/access-changes.ts); while those changes
 * might go unheard (`caching` off), every request reads the database.
 */
export class PrincipalCache {
  private readonly entries = new Map<string, { principal: Principal | null; until: number }>();
  /** Bumped by every clear: a lookup that began before a clear does not store its answer. */
  private generation = 0;
  private caching = true;

  constructor(
    private readonly lookup: PrincipalLookup,
    private readonly ttlMs = 5_000,
    private readonly now: () => number = Date.now,
    /** Told of every request a key authenticates (its last use is recorded from there). */
    private readonly onUse: (p: Principal) => void = () => {},
  ) {}

  /** The principal of a presented key, or UNAUTHORIZED: unknown, or past its `expiresAt`. */
  async authenticate(key: string): Promise<Principal> {
    const principal = await this.resolve(key);
    if (!principal) throw Unauthorized('Invalid API key');
    if (principal.expiresAt && principal.expiresAt.getTime() <= this.now()) throw Unauthorized('API key expired');
    this.onUse(principal);
    return principal;
  }

  async resolve(key: string): Promise<Principal | null> {
    const hash = hashToken(key);
    const hit = this.entries.get(hash);
    const t = this.now();
    if (hit && hit.until > t) return hit.principal;
    const generation = this.generation;
    const principal = await this.lookup(hash);
    if (!this.caching || generation !== this.generation) return principal;
    if (this.entries.size > 10_000) this.entries.clear();
    this.entries.set(hash, { principal, until: t + this.ttlMs });
    return principal;
  }

  clear(): void {
    this.generation++;
    this.entries.clear();
  }

  /** Off: nothing is kept (and what was is dropped), every key is read at every request. */
  setCaching(on: boolean): void {
    if (!on) this.clear();
    this.caching = on;
  }
}
