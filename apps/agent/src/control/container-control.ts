/**
 * Answers a ContainerRequest (proto ControlRequest.container): the container.* operations on
 * this server's engine. Only Skiff's containers are seen; a restart happens only when the
 * container's `skiff.kind` / `skiff.id` are those the control plane checked the caller owns.
 * Replies never carry a container's environment to the log.
 */
import { ContainerOperation, type ContainerRequest, type ControlReply } from '@skiff/proto';
import type { Logger } from 'pino';
import type { ContainerOps } from '../docker/container-ops.js';

export class ContainerControl {
  constructor(private readonly deps: { ops: ContainerOps; log: Logger }) {}

  async handle(request: ContainerRequest): Promise<ControlReply> {
    const { ops } = this.deps;
    switch (request.operation) {
      case ContainerOperation.CONTAINER_OPERATION_LIST:
        return answer(await ops.list());
      case ContainerOperation.CONTAINER_OPERATION_INSPECT: {
        const found = await ops.inspect(request.containerId);
        return found ? answer(found) : notFound(request.containerId);
      }
      case ContainerOperation.CONTAINER_OPERATION_RESTART: {
        const found = (await ops.inspect(request.containerId)) as { Id?: string; Config?: { Labels?: Record<string, string> } } | null;
        const labels = found?.Config?.Labels ?? {};
        if (!found?.Id || request.expectKind === '' || labels['skiff.kind'] !== request.expectKind || labels['skiff.id'] !== request.expectId) {
          return notFound(request.containerId);
        }
        await ops.restart(found.Id);
        this.deps.log.info({ containerId: found.Id, kind: request.expectKind, id: request.expectId }, 'restarted a container');
        return answer({});
      }
      default:
        return { commandIds: [], error: 'the container request names no operation this agent knows' };
    }
  }
}

function answer(result: unknown): ControlReply {
  return { commandIds: [], error: '', container: { resultJson: JSON.stringify(result), notFound: false } };
}

function notFound(ref: string): ControlReply {
  return { commandIds: [], error: `no Skiff container ${ref} on this server`, container: { resultJson: '', notFound: true } };
}
