export * from './postgres.js';
export * from './wait-for.js';
export * from './nats.js';
export * from './registry.js';
export * from './git-server.js';
export * from './second-docker.js';
export * from './archives.js';
export * from './ssh-git-server.js';
