import { databaseRouter } from '../database-services.js';

/** MySQL database services (beyond the spec's lists; see database-services.ts). */
export const dbC = databaseRouter({ router: 'dbC', engine: 'mysql', label: 'MySQL', defaultImage: 'mysql:8', port: 3306 });
