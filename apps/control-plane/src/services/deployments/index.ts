// Deployments of applications and compose stacks: queueing them, their history and logs, cancels and queue cleaning, lifecycle (stop, start, reload, delete), drop archives.
// What routers and the composition root use; services import each other's files directly.
export { CommandService } from './commands.js';
export { CrashLoops, type CrashLoopEvent, type OnCrashLoop } from './crash-loops.js';
export { DeploymentControl } from './deployment-control.js';
export { DeploymentService } from './deployments.js';
export { DropArchiveService, type UploadedFile } from './drop-archives.js';
export { WorkloadLifecycle } from './workload-lifecycle.js';
