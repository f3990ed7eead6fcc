// Applications' mounts: records (mounts.*), what a deploy sends, and the deletion that keeps or removes volumes.
export { MountService } from './mounts.js';
export { type DeployMounts, deployMounts } from './deploy-mounts.js';
export { ApplicationDeletion } from './application-deletion.js';
