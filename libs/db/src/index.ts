export * from './database.js';
export * from './schema.js';
