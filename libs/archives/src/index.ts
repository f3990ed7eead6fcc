export * from './archive-reader.js';
