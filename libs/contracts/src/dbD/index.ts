import { databaseRouter } from '../database-services.js';

/** MongoDB database services (beyond the spec's lists; see database-services.ts). */
export const dbD = databaseRouter({ router: 'dbD', engine: 'mongo', label: 'MongoDB', defaultImage: 'mongo:7', port: 27017 });
