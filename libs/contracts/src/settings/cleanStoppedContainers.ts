import { cleanupContract } from './cleanup.js';

export const cleanStoppedContainers = cleanupContract('Remove stopped containers');
