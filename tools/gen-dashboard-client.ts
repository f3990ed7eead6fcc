// Writes the dashboard's API types (apps/dashboard/web/api-schema.d.ts) from docs/openapi.json.
import { writeFileSync } from 'node:fs';
import { SCHEMA_FILE, dashboardSchema } from './lib/dashboard-schema.ts';

writeFileSync(SCHEMA_FILE, await dashboardSchema());
console.log('wrote apps/dashboard/web/api-schema.d.ts');
