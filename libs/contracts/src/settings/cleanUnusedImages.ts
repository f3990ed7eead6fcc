import { cleanupContract } from './cleanup.js';

export const cleanUnusedImages = cleanupContract('Remove container images no container uses');
