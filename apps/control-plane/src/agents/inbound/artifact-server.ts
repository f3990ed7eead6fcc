import { createReadStream } from 'node:fs';
import { once } from 'node:events';
import { type Metadata, type ServerWritableStream, status } from '@grpc/grpc-js';
import type { AgentArtifactsServer, ArchiveChunk } from '@skiff/proto';
import type { AgentBundle } from '../agent-bundle.js';
import type { Logger } from 'pino';
import { type GrpcError, grpcError } from './report-server.js';

/** Where an archive's file is, when the given server's agent may fetch it (DropArchiveService.locate). */
export interface ArchiveLocator {
  locate(serverId: string, archiveId: string): Promise<{ path: string; size: number } | null>;
}

export interface ArtifactServerOptions {
  archives: ArchiveLocator;
  log: Logger;
  /** The agent program offered for updates; absent: FetchAgentBundle answers NOT_FOUND. */
  bundle?: Pick<AgentBundle, 'current'>;
  /** Bytes per ArchiveChunk. Default 64 KiB. */
  chunkBytes?: number;
}

type Authenticate = (metadata: Metadata) => string | GrpcError;

/**
 * The AgentArtifacts gRPC service (proto/skiff/agent/v1/reports.proto), served beside
 * AgentReports with its credential check (`ReportServer.addService`). FetchArchive streams
 * an uploaded archive in chunks, waiting for the agent to take each one (backpressure).
 * Only the agent of the server the archive's application runs on may fetch it: to any other
 * the archive does not exist (NOT_FOUND).
 */
export function artifactHandlers(o: ArtifactServerOptions, authenticate: Authenticate): AgentArtifactsServer {
  return {
    fetchArchive: (call) => {
      const serverId = authenticate(call.metadata);
      if (typeof serverId !== 'string') {
        call.emit('error', serverId);
        return;
      }
      void streamArchive(o, serverId, call);
    },
    fetchAgentBundle: (call) => {
      const serverId = authenticate(call.metadata);
      if (typeof serverId !== 'string') {
        call.emit('error', serverId);
        return;
      }
      void streamBundle(o, serverId, call);
    },
  };
}

type ChunkCall = ServerWritableStream<unknown, ArchiveChunk>;

async function streamBundle(o: ArtifactServerOptions, serverId: string, call: ServerWritableStream<{ sha256: string }, ArchiveChunk>) {
  const log = o.log.child({ serverId, bundle: call.request.sha256 });
  let bundle;
  try {
    bundle = await o.bundle?.current();
  } catch (err) {
    log.error({ err }, 'could not read the agent program');
    call.emit('error', grpcError(status.UNAVAILABLE, 'the control plane could not read the agent program; try again'));
    return;
  }
  if (!bundle || bundle.sha256 !== call.request.sha256) {
    call.emit('error', grpcError(status.NOT_FOUND, `the control plane offers no agent program ${call.request.sha256}`));
    return;
  }
  await streamFile(o, call, bundle.path, log, `the agent program ${call.request.sha256}`);
}

async function streamArchive(o: ArtifactServerOptions, serverId: string, call: ServerWritableStream<{ archiveId: string }, ArchiveChunk>) {
  const { archiveId } = call.request;
  const log = o.log.child({ serverId, archiveId });
  let found: { path: string; size: number } | null;
  try {
    found = await o.archives.locate(serverId, archiveId);
  } catch (err) {
    log.error({ err }, 'could not look the archive up');
    call.emit('error', grpcError(status.UNAVAILABLE, 'the control plane could not read the archive; try again'));
    return;
  }
  if (!found) {
    call.emit('error', grpcError(status.NOT_FOUND, `no archive ${archiveId} for this server`));
    return;
  }
  await streamFile(o, call, found.path, log, `archive ${archiveId} for this server`);
}

/** Streams a file in chunks, waiting for the agent to take each one (backpressure). */
async function streamFile(o: ArtifactServerOptions, call: ChunkCall, path: string, log: Logger, what: string) {
  const file = createReadStream(path, { highWaterMark: o.chunkBytes ?? 64 * 1024 });
  // A cancelled call (the agent gave up or went away) stops the read and any wait for drain.
  const gone = new AbortController();
  call.on('cancelled', () => {
    gone.abort();
    file.destroy();
  });
  try {
    for await (const chunk of file as AsyncIterable<Buffer>) {
      if (call.cancelled) return;
      if (!call.write({ data: chunk })) await once(call, 'drain', { signal: gone.signal });
    }
    call.end();
    log.info({ what }, 'file sent to the agent');
  } catch (err) {
    if (call.cancelled) return;
    const missing = (err as NodeJS.ErrnoException).code === 'ENOENT';
    if (!missing) log.error({ err, what }, 'could not send a file to the agent');
    call.emit('error', missing ? grpcError(status.NOT_FOUND, `no ${what}`) : grpcError(status.UNAVAILABLE, `${what} could not be read; try again`));
  }
}
