export * from './names.js';
export * from './hosts.js';
export * from './cron.js';
export * from './backup-prefix.js';
export * from './image-ref.js';
export * from './outbound-url.js';
export * from './ssh-keys.js';
export * from './pem.js';
