import { cleanupContract } from './cleanup.js';

export const cleanContainerBuilder = cleanupContract('Clear the container build cache');
