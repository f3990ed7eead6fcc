import { cleanupContract } from './cleanup.js';

export const cleanAll = cleanupContract('Run every cleanup: images, volumes, stopped containers and build cache');
