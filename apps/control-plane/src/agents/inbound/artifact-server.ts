import { createReadStream } from 'node:fs';
import { once } from 'node:events';
import { type Metadata, type ServerWritableStream, status } from '@grpc/grpc-js';
import type { AgentArtifactsServer, ArchiveChunk, FetchArchiveRequest } from '@skiff/proto';
import type { Logger } from 'pino';
import { type GrpcError, grpcError } from './report-server.js';

/** Where an archive's file is, when the given server's agent may fetch it (DropArchiveService.locate). */
export interface ArchiveLocator {
  locate(serverId: string, archiveId: string): Promise<{ path: string; size: number } | null>;
}

export interface ArtifactServerOptions {
  archives: ArchiveLocator;
  log: Logger;
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
  };
}

async function streamArchive(o: ArtifactServerOptions, serverId: string, call: ServerWritableStream<FetchArchiveRequest, ArchiveChunk>) {
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
  const file = createReadStream(found.path, { highWaterMark: o.chunkBytes ?? 64 * 1024 });
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
    log.info({ size: found.size }, 'archive sent to the agent');
  } catch (err) {
    if (call.cancelled) return;
    const missing = (err as NodeJS.ErrnoException).code === 'ENOENT';
    if (!missing) log.error({ err }, 'could not send the archive');
    call.emit('error', missing ? grpcError(status.NOT_FOUND, `no archive ${archiveId} for this server`) : grpcError(status.UNAVAILABLE, 'the archive could not be read; try again'));
  }
}
