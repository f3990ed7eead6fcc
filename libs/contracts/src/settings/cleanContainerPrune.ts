import { cleanupContract } from './cleanup.js';

export const cleanContainerPrune = cleanupContract('Prune unused containers, images, networks and build cache');
