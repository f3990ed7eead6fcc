import { defineRouter } from '../contract.js';
import { getNodeApps } from './getNodeApps.js';
import { getNodeInfo } from './getNodeInfo.js';
import { getNodes } from './getNodes.js';

export const cluster = defineRouter('cluster', { getNodes, getNodeInfo, getNodeApps });
