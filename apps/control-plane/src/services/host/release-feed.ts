import { type OutboundPolicy, OutboundFetchError, outboundFetch } from '@skiff/outbound';
import { z } from 'zod';
import { DomainError } from '../../errors.js';

/** Where releases are listed unless SKIFF_RELEASE_FEED_URL says otherwise. */
export const DEFAULT_RELEASE_FEED_URL = 'https://releases.skiff.dev/feed.json';

const Release = z.object({ version: z.string().min(1), url: z.string().optional(), notes: z.string().optional() });
const Feed = z.union([z.object({ latest: Release }), z.object({ releases: z.array(Release).min(1) })]);

export type Release = z.infer<typeof Release>;

export interface ReleaseFeedOptions {
  url: string;
  policy: OutboundPolicy;
  timeoutMs?: number;
  maxBytes?: number;
}

/** Reads the newest release the feed lists; an unreachable or malformed feed is a BAD_REQUEST saying which. */
export async function newestRelease(o: ReleaseFeedOptions): Promise<Release> {
  let body: Buffer;
  try {
    const answer = await outboundFetch(o.url, { policy: o.policy, timeoutMs: o.timeoutMs ?? 10_000, maxBytes: o.maxBytes ?? 1024 * 1024, headers: { accept: 'application/json' } });
    if (answer.status !== 200) throw new OutboundFetchError(`it answered HTTP ${answer.status}`);
    body = answer.body;
  } catch (err) {
    throw feedProblem(o.url, err instanceof OutboundFetchError ? err.message : 'it could not be reached');
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    throw feedProblem(o.url, 'its answer is not JSON');
  }
  const feed = Feed.safeParse(parsed);
  if (!feed.success) throw feedProblem(o.url, 'its answer is not a release feed ({"latest": {"version"}} or {"releases": [{"version"}]})');
  const releases = 'latest' in feed.data ? [feed.data.latest] : feed.data.releases;
  return releases.reduce((newest, r) => (compareVersions(r.version, newest.version) > 0 ? r : newest));
}

function feedProblem(url: string, why: string): DomainError {
  return new DomainError('BAD_REQUEST', `The release feed ${url} could not be read: ${why}`);
}

/**
 * Orders `1.2.10` after `1.2.9` (numeric parts; a leading `v` ignored); a pre-release
 * (`1.3.0-rc.1`) comes before its release.
 */
export function compareVersions(a: string, b: string): number {
  const split = (v: string) => {
    const [core, pre] = v.trim().replace(/^v/i, '').split('-', 2) as [string, string | undefined];
    return { parts: core.split('.').map((n) => Number.parseInt(n, 10) || 0), pre };
  };
  const x = split(a);
  const y = split(b);
  for (let i = 0; i < Math.max(x.parts.length, y.parts.length); i++) {
    const d = (x.parts[i] ?? 0) - (y.parts[i] ?? 0);
    if (d !== 0) return Math.sign(d);
  }
  if (x.pre === y.pre) return 0;
  if (x.pre === undefined) return 1;
  if (y.pre === undefined) return -1;
  return x.pre < y.pre ? -1 : 1;
}
