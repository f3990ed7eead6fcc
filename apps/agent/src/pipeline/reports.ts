import type { CommandResult, CrashLoop, DeploymentEvent } from '@skiff/proto';

/** Where reports go (the gRPC report client implements it). */
export interface Reports {
  reportEvent(event: DeploymentEvent): void;
  reportResult(result: CommandResult): void;
  /** A workload in a crash loop (deployments/crash-loops.ts); absent: crash loops are not reported. */
  reportCrashLoop?(crashLoop: CrashLoop): void;
}
