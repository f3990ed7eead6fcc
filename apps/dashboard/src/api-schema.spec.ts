// The dashboard's API types are the checked-in OpenAPI document's: regenerate with `npm run gen`.
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { SCHEMA_FILE, dashboardSchema } from '../../../tools/lib/dashboard-schema.ts';

it('apps/dashboard/web/api-schema.d.ts matches docs/openapi.json', async () => {
  expect(readFileSync(SCHEMA_FILE, 'utf8') === (await dashboardSchema()), 'run npm run gen').toBe(true);
}, 60_000);
