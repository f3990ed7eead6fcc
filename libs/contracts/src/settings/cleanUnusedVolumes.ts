import { cleanupContract } from './cleanup.js';

export const cleanUnusedVolumes = cleanupContract('Remove container volumes no container uses');
