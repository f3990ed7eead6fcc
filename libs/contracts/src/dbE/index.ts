import { databaseRouter } from '../database-services.js';

/** libSQL database services (beyond the spec's lists; see database-services.ts). */
export const dbE = databaseRouter({ router: 'dbE', engine: 'libsql', label: 'libSQL', defaultImage: 'ghcr.io/tursodatabase/libsql-server', port: 8080 });
