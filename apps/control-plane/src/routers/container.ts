import type { RouterHandlers } from '../http/context.js';
import type { ContainerService } from '../services/containers/index.js';

export const containerHandlers = (containers: ContainerService): RouterHandlers<'container'> => ({
  getContainers: (input, { principal }) => containers.getContainers(principal, input),
  getConfig: (input, { principal }) => containers.getConfig(principal, input),
  restartContainer: (input, { principal }) => containers.restartContainer(principal, input),
  getContainersByAppNameMatch: (input, { principal }) => containers.getContainersByAppNameMatch(principal, input),
  getContainersByAppLabel: (input, { principal }) => containers.getContainersByAppLabel(principal, input),
  getStackContainersByAppName: (input, { principal }) => containers.getStackContainersByAppName(principal, input),
  getServiceContainersByAppName: (input, { principal }) => containers.getServiceContainersByAppName(principal, input),
});
