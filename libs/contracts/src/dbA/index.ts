import { databaseRouter } from '../database-services.js';

/** PostgreSQL database services (beyond the spec's lists; see database-services.ts). */
export const dbA = databaseRouter({ router: 'dbA', engine: 'postgres', label: 'PostgreSQL', defaultImage: 'postgres:17', port: 5432 });
