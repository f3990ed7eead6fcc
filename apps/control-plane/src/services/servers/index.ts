// Servers, their agents (joins, presence, credentials) and SSH keys.
// What routers and the composition root use; services import each other's files directly.
export { ServerAgents } from './server-agents.js';
export { agentEndpoints, ServerService } from './servers.js';
export { SshKeyService } from './ssh-keys.js';
export { CLUSTER_REQUEST_TIMEOUT_MS, ClusterService, NODE_REMOVAL_TIMEOUT_MS } from './cluster.js';
