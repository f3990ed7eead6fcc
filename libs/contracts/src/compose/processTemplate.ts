import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId, Unspecified } from '../primitives.js';

const TEMPLATE =
  'eyJjb21wb3NlIjoic2VydmljZXM6XG4gIHBsYXVzaWJsZTpcbiAgICBpbWFnZTogZ2hjci5pby9wbGF1c2libGUvY29tbXVuaXR5LWVkaXRpb246djIuMVxuIiwiY29uZmlnIjoiW3ZhcmlhYmxlc11cbm1haW5fZG9tYWluID0gXCIke2RvbWFpbn1cIlxuc2VjcmV0ID0gXCIke2Jhc2U2NDo2NH1cIlxuXG5bW2NvbmZpZy5kb21haW5zXV1cbnNlcnZpY2VOYW1lID0gXCJwbGF1c2libGVcIlxucG9ydCA9IDgwMDBcbmhvc3QgPSBcIiR7bWFpbl9kb21haW59XCJcbiJ9';

export const processTemplate = defineContract({
  method: 'POST',
  summary: 'Preview what importing a base64-encoded template would produce, without saving',
  description:
    '`base64` is a template encoded in base64: a JSON object `{compose, config}` holding the ' +
    'compose YAML and the template configuration (TOML: `[variables]`, `[[config.domains]]`, ' +
    '`[[config.env]]`, `[[config.mounts]]`); helpers such as `${password:32}` get fresh values.',
  input: z.object({ base64: z.string(), composeId: RequiredId }),
  output: Unspecified,
  example: { base64: TEMPLATE, composeId: 'cmp_example' },
});
