import { type OutboundPolicy, OutboundFetchError, outboundFetch } from '@skiff/outbound';

/** A catalog file that could not be fetched, with the reason (shown to the caller). */
export class CatalogFetchError extends Error {
  override name = 'CatalogFetchError';
}

/**
 * The operator's catalog (SKIFF_TEMPLATES_URL): the operator named it, so it may be on the
 * operator's own network; link-local and cloud-metadata addresses are refused all the same.
 * A catalog a caller names (`baseUrl`) goes by the platform's outbound policy instead.
 */
export const OPERATOR_CATALOG: OutboundPolicy = { allowPrivate: true };

export interface FetchLimits {
  /** The largest answer body taken. */
  maxBytes: number;
  /** For the whole fetch. */
  timeoutMs: number;
  /** Which addresses may be connected to. */
  policy: OutboundPolicy;
}

/**
 * GETs a text file over http(s) with @skiff/outbound: the host resolved once and every
 * address checked under `limits.policy`, the connection pinned to them, no redirect followed
 * (one is an error naming where it pointed); the answer must be HTTP 200 and UTF-8 within the
 * size limit, all within the deadline.
 */
export async function fetchCatalogText(url: string, limits: FetchLimits): Promise<string> {
  let answer;
  try {
    answer = await outboundFetch(url, {
      policy: limits.policy,
      maxBytes: limits.maxBytes,
      timeoutMs: limits.timeoutMs,
      headers: { accept: 'application/json, text/plain, */*' },
    });
  } catch (error) {
    if (error instanceof OutboundFetchError) throw new CatalogFetchError(error.message);
    throw error;
  }
  if (answer.status !== 200) throw new CatalogFetchError(`answered HTTP ${answer.status}`);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(answer.body);
  } catch {
    throw new CatalogFetchError('the answer is not UTF-8 text');
  }
}
