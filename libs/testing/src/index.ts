export * from './postgres.js';
export * from './wait-for.js';
