import type { CommandResult, DeploymentEvent } from '@skiff/proto';

/** Where reports go (the gRPC report client implements it). */
export interface Reports {
  reportEvent(event: DeploymentEvent): void;
  reportResult(result: CommandResult): void;
}
