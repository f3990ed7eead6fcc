// The dashboard's API types, generated from docs/openapi.json by openapi-typescript (the same
// generation the OpenAPI client test checks). Shared by tools/gen-dashboard-client.ts, which
// writes them, and the dashboard's drift check.
import { pathToFileURL } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';

export const DOCUMENT_FILE = new URL('../../docs/openapi.json', import.meta.url);
export const SCHEMA_FILE = new URL('../../apps/dashboard/web/api-schema.d.ts', import.meta.url);

const HEADER = '// Generated from docs/openapi.json by tools/gen-dashboard-client.ts (npm run gen). Do not edit.\n';

export async function dashboardSchema(): Promise<string> {
  return HEADER + astToString(await openapiTS(pathToFileURL(DOCUMENT_FILE.pathname)));
}
