import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';

const TEMPLATE =
  'eyJjb21wb3NlIjoic2VydmljZXM6XG4gIHBsYXVzaWJsZTpcbiAgICBpbWFnZTogZ2hjci5pby9wbGF1c2libGUvY29tbXVuaXR5LWVkaXRpb246djIuMVxuIiwiY29uZmlnIjoiW3ZhcmlhYmxlc11cbm1haW5fZG9tYWluID0gXCIke2RvbWFpbn1cIlxuc2VjcmV0ID0gXCIke2Jhc2U2NDo2NH1cIlxuXG5bW2NvbmZpZy5kb21haW5zXV1cbnNlcnZpY2VOYW1lID0gXCJwbGF1c2libGVcIlxucG9ydCA9IDgwMDBcbmhvc3QgPSBcIiR7bWFpbl9kb21haW59XCJcbiJ9';

/** A domain a template asks for, with its host resolved. */
export const TemplateDomain = z.object({
  serviceName: z.string(),
  port: z.number().int(),
  host: z.string().describe('as the template gives it, or a generated domain (see domain.generateDomain)'),
  path: z.string().nullable(),
});

/** What a template becomes for one stack: its helpers and variables resolved. */
export const ProcessedTemplate = z.object({
  compose: z.string().describe("the template's compose file, unchanged (its `${VAR}` are filled from `env` by Compose)"),
  env: z.string().describe('the stack\'s dotenv text'),
  domains: z.array(TemplateDomain),
  mounts: z
    .array(z.object({ filePath: z.string(), content: z.string() }))
    .describe('files the template writes beside the compose file (relative paths)'),
});

export const processTemplate = defineContract({
  method: 'POST',
  summary: 'Preview what importing a base64-encoded template would produce, without saving',
  description:
    '`base64` is a template encoded in base64: a JSON object `{compose, config}` holding the ' +
    'compose YAML and the template configuration (TOML: `[variables]`, `[[config.domains]]`, ' +
    '`[[config.env]]`, `[[config.mounts]]`); helpers such as `${password:32}` get fresh values. ' +
    '`${domain}` and domains without a host get generated domains for the stack (its `appName` ' +
    'and server, as domain.generateDomain). A template that cannot be read or processed is ' +
    'BAD_REQUEST naming `base64`, with the place and the reason.',
  input: z.object({ base64: z.string(), composeId: RequiredId }),
  output: ProcessedTemplate,
  example: { base64: TEMPLATE, composeId: 'cmp_example' },
});
