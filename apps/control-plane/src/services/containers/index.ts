export { ContainerService } from './containers.js';
export { ContainerRequests } from './container-requests.js';
export { LogService, type LogEvent } from './logs.js';
