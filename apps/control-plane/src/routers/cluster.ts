import type { RouterHandlers } from '../http/context.js';
import type { ClusterService } from '../services/servers/index.js';

export const clusterHandlers = (cluster: ClusterService): RouterHandlers<'cluster'> => ({
  getNodes: (input, { principal }) => cluster.getNodes(principal, input),
  getNodeInfo: (input, { principal }) => cluster.getNodeInfo(principal, input),
  getNodeApps: (input, { principal }) => cluster.getNodeApps(principal, input),
  addWorker: (input, { principal }) => cluster.addWorker(principal, input),
  addManager: (input, { principal }) => cluster.addManager(principal, input),
  removeNode: (input, { principal }) => cluster.removeNode(principal, input),
});
