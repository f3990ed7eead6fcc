import { databaseRouter } from '../database-services.js';

/** MariaDB database services (beyond the spec's lists; see database-services.ts). */
export const dbB = databaseRouter({ router: 'dbB', engine: 'mariadb', label: 'MariaDB', defaultImage: 'mariadb:11', port: 3306 });
