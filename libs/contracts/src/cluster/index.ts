import { defineRouter } from '../contract.js';
import { addManager } from './addManager.js';
import { addWorker } from './addWorker.js';
import { getNodeApps } from './getNodeApps.js';
import { getNodeInfo } from './getNodeInfo.js';
import { getNodes } from './getNodes.js';
import { removeNode } from './removeNode.js';

export const cluster = defineRouter('cluster', { getNodes, getNodeInfo, getNodeApps, addWorker, addManager, removeNode });
