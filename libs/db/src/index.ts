export * from './database.js';
export * from './schema.js';
export * from './pglite-restore.js';
export * from './listener.js';
