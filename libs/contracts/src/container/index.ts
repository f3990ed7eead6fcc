import { defineRouter } from '../contract.js';
import { getConfig } from './getConfig.js';
import { getContainers } from './getContainers.js';
import { getContainersByAppLabel } from './getContainersByAppLabel.js';
import { getContainersByAppNameMatch } from './getContainersByAppNameMatch.js';
import { getServiceContainersByAppName } from './getServiceContainersByAppName.js';
import { getStackContainersByAppName } from './getStackContainersByAppName.js';
import { restartContainer } from './restartContainer.js';

export const container = defineRouter('container', {
  getContainers,
  restartContainer,
  getConfig,
  getContainersByAppNameMatch,
  getContainersByAppLabel,
  getStackContainersByAppName,
  getServiceContainersByAppName,
});
