export * from './postgres.js';
export * from './wait-for.js';
export * from './nats.js';
export * from './registry.js';
