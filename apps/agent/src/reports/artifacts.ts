/**
 * Downloads what commands refer to from the control plane's AgentArtifacts gRPC service
 * (served beside AgentReports), authenticated like the reports with
 * `authorization: Bearer <credential>`. The credential is never logged.
 */
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { type ChannelCredentials, type ClientReadableStream, Metadata, credentials as grpcCredentials, status as grpcStatus, type ServiceError } from '@grpc/grpc-js';
import { AgentArtifactsClient, type ArchiveChunk } from '@skiff/proto';

export interface ArchiveDownload {
  size: number;
  /** SHA-256 of what was received, lowercase hex. */
  sha256: string;
}

export interface FetchOptions {
  /** Aborts the download at once (the partial file is removed). */
  signal: AbortSignal;
  /** The download must have ended by this instant (epoch ms). */
  deadline: number;
  /** A download growing past this many bytes is cut and refused. */
  maxBytes: number;
}

/** What the build step needs: an archive downloaded into a file. */
export interface ArchiveFetcher {
  /** Downloads archive `archiveId` into `path` (created new, mode 0600); answers its size and SHA-256. */
  fetchArchive(archiveId: string, path: string, options: FetchOptions): Promise<ArchiveDownload>;
}

/** Why a download failed, in words for the deployment's log. `transient`: trying again may work. */
export class ArtifactError extends Error {
  override name = 'ArtifactError';
  constructor(
    message: string,
    readonly transient: boolean,
  ) {
    super(message);
  }
}

/** The download was stopped by the caller's signal. */
export class ArtifactAborted extends Error {
  override name = 'ArtifactAborted';
}

export interface ArtifactClientOptions {
  /** gRPC target of the control plane (the same as the report client's). */
  target: string;
  credential: string;
  channelCredentials?: ChannelCredentials;
  /** Attempts for transient failures (control plane unreachable). Default 4. */
  attempts?: number;
  /** Wait before the second attempt, doubled after each. Default 500 ms. */
  retryInitialMs?: number;
}

const TRANSIENT = new Set<number>([grpcStatus.UNAVAILABLE, grpcStatus.RESOURCE_EXHAUSTED, grpcStatus.ABORTED, grpcStatus.INTERNAL, grpcStatus.UNKNOWN]);

export class ArtifactClient implements ArchiveFetcher {
  private readonly client: AgentArtifactsClient;
  private readonly metadata = new Metadata();

  constructor(private readonly o: ArtifactClientOptions) {
    this.metadata.set('authorization', `Bearer ${o.credential}`);
    this.client = new AgentArtifactsClient(o.target, o.channelCredentials ?? grpcCredentials.createInsecure(), {
      'grpc.initial_reconnect_backoff_ms': 200,
      'grpc.max_reconnect_backoff_ms': 5_000,
    });
  }

  async fetchArchive(archiveId: string, path: string, options: FetchOptions): Promise<ArchiveDownload> {
    return this.fetch(`archive ${archiveId}`, () => this.client.fetchArchive({ archiveId }, this.metadata, { deadline: new Date(options.deadline) }), path, options);
  }

  /** Downloads the agent program the control plane offers with this SHA-256 (settings.updateServer) into `path`. */
  async fetchAgentBundle(sha256: string, path: string, options: FetchOptions): Promise<ArchiveDownload> {
    return this.fetch(`agent program ${sha256}`, () => this.client.fetchAgentBundle({ sha256 }, this.metadata, { deadline: new Date(options.deadline) }), path, options);
  }

  private async fetch(what: string, open: () => ClientReadableStream<ArchiveChunk>, path: string, options: FetchOptions): Promise<ArchiveDownload> {
    const attempts = this.o.attempts ?? 4;
    let wait = this.o.retryInitialMs ?? 500;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.once(what, open, path, options);
      } catch (err) {
        await rm(path, { force: true });
        if (!(err instanceof ArtifactError) || !err.transient || attempt >= attempts || Date.now() + wait >= options.deadline) throw err;
      }
      await sleep(wait, options.signal);
      wait *= 2;
    }
  }

  close(): void {
    this.client.close();
  }

  private async once(what: string, open: () => ClientReadableStream<ArchiveChunk>, path: string, options: FetchOptions): Promise<ArchiveDownload> {
    if (options.signal.aborted) throw new ArtifactAborted('the download was stopped');
    if (Date.now() >= options.deadline) throw new ArtifactError('the archive download did not finish before the deadline', false);
    const call = open();
    const hash = createHash('sha256');
    let size = 0;
    const take = new Transform({
      writableObjectMode: true,
      transform(chunk: ArchiveChunk, _enc, done) {
        size += chunk.data.length;
        if (size > options.maxBytes) return done(new ArtifactError(`the archive is larger than the ${options.maxBytes} bytes announced`, false));
        hash.update(chunk.data);
        done(null, chunk.data);
      },
    });
    const onAbort = () => call.cancel();
    options.signal.addEventListener('abort', onAbort, { once: true });
    try {
      await pipeline(call, take, createWriteStream(path, { flags: 'wx', mode: 0o600 }));
    } catch (err) {
      if (options.signal.aborted) throw new ArtifactAborted('the download was stopped');
      if (err instanceof ArtifactError) throw err;
      const e = err as ServiceError;
      if (typeof e.code !== 'number') throw err;
      if (e.code === grpcStatus.NOT_FOUND) throw new ArtifactError(`the control plane has no ${what} for this server (${e.details})`, false);
      if (e.code === grpcStatus.DEADLINE_EXCEEDED) throw new ArtifactError('the archive download did not finish before the deadline', false);
      if (e.code === grpcStatus.UNAUTHENTICATED) throw new ArtifactError(`the control plane refused this agent's credential (${e.details})`, false);
      throw new ArtifactError(`the archive download failed: ${grpcStatus[e.code] ?? e.code} ${e.details ?? ''}`.trim(), TRANSIENT.has(e.code));
    } finally {
      options.signal.removeEventListener('abort', onAbort);
    }
    return { size, sha256: hash.digest('hex') };
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new ArtifactAborted('the download was stopped'));
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new ArtifactAborted('the download was stopped'));
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
