/**
 * A failed request to the bucket, as a person reads it: what was being done, to which bucket
 * at which host, and what went wrong (the S3 server's answer, the connection's error, or the
 * timeout), e.g. "uploading part 3 of db/x.sql.gz to bucket backups at s3.example:9000:
 * connection refused (ECONNREFUSED)". Never the request, its signature or the keys; the
 * handlers still scrub the text (tool-reason.ts) since a server's message is not ours.
 */

/** The connection errors a bucket's outage gives, in words. */
const CONNECTION_ERRORS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset by the server',
  EPIPE: 'connection closed by the server',
  ETIMEDOUT: 'timed out',
  ENOTFOUND: 'the host name does not resolve',
  EAI_AGAIN: 'the host name could not be resolved',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ECONNABORTED: 'connection aborted',
};

/** How long a connection to the bucket may take to open, and a request may go without a byte either way. */
export const BUCKET_CONNECT_TIMEOUT_MS = 10_000;
export const BUCKET_IDLE_TIMEOUT_MS = 60_000;

export class BucketFailure extends Error {
  constructor(
    /** What was being done and where: "uploading part 3 of <key> to bucket <b> at <host>". */
    readonly step: string,
    cause: unknown,
  ) {
    super(`${step}: ${describeBucketError(cause)}`, { cause });
    this.name = 'BucketFailure';
  }
}

interface SdkError {
  name?: string;
  code?: string;
  Code?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number };
  $response?: { statusCode?: number };
  errors?: unknown[];
}

export function describeBucketError(err: unknown): string {
  const e = (err ?? {}) as SdkError;
  const status = e.$metadata?.httpStatusCode ?? e.$response?.statusCode;
  if (status) {
    const code = e.Code ?? e.name ?? 'Error';
    const message = e.message && e.message !== code && e.message !== 'UnknownError' ? `: ${e.message}` : '';
    return `the S3 server answered ${status} ${code}${message}`;
  }
  // Node gives an AggregateError when every address of the host refused: the first says why.
  const code = e.code ?? (e.errors?.[0] as SdkError | undefined)?.code;
  if (code && CONNECTION_ERRORS[code]) return `${CONNECTION_ERRORS[code]} (${code})`;
  if (e.name === 'TimeoutError') {
    return /establish a connection/.test(e.message ?? '')
      ? `no connection within ${BUCKET_CONNECT_TIMEOUT_MS / 1000} s (timed out)`
      : `timed out after ${BUCKET_IDLE_TIMEOUT_MS / 1000} s without an answer`;
  }
  if (e.name === 'AbortError') return 'the request was aborted';
  return e.message || e.name || String(err);
}

/** Where a request went, for a failure's step: the bucket and the endpoint's host (never its user info). */
export function bucketAt(bucket: string, endpoint: string): string {
  let host = endpoint;
  try {
    host = new URL(endpoint).host;
  } catch {
    // The control plane checked it; the agent's client refused it before any request.
  }
  return `bucket ${bucket} at ${host}`;
}
