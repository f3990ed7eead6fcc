// Writes docs/openapi.json from the contracts. CI fails when the checked-in file drifts.
import { readFileSync, writeFileSync } from 'node:fs';
import { buildOpenApiDocument } from '../apps/control-plane/src/http/openapi.ts';

const version = JSON.parse(readFileSync(new URL('../apps/control-plane/package.json', import.meta.url), 'utf8')).version;
writeFileSync(new URL('../docs/openapi.json', import.meta.url), JSON.stringify(buildOpenApiDocument(version), null, 2) + '\n');
console.log('wrote docs/openapi.json');
