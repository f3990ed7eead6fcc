import { z } from 'zod';
import { defineContract } from '../contract.js';
import { DomainRecord } from '../domain/record.js';
import { RequiredId } from '../primitives.js';
import { ComposeRecord } from './record.js';

const TEMPLATE =
  'eyJjb21wb3NlIjoic2VydmljZXM6XG4gIHBsYXVzaWJsZTpcbiAgICBpbWFnZTogZ2hjci5pby9wbGF1c2libGUvY29tbXVuaXR5LWVkaXRpb246djIuMVxuIiwiY29uZmlnIjoiW3ZhcmlhYmxlc11cbm1haW5fZG9tYWluID0gXCIke2RvbWFpbn1cIlxuc2VjcmV0ID0gXCIke2Jhc2U2NDo2NH1cIlxuXG5bW2NvbmZpZy5kb21haW5zXV1cbnNlcnZpY2VOYW1lID0gXCJwbGF1c2libGVcIlxucG9ydCA9IDgwMDBcbmhvc3QgPSBcIiR7bWFpbl9kb21haW59XCJcbiJ9';

/** A stack with the domains a template added to it. */
export const TemplateStack = z.object({
  compose: ComposeRecord,
  domains: z.array(DomainRecord).describe("the domains the template added (the stack's earlier domains stay)"),
});

export const import_ = defineContract({
  method: 'POST',
  summary: 'Import a base64-encoded template into the stack: compose file, env, domains, mounts',
  description:
    '`base64` is a template encoded in base64: a JSON object `{compose, config}` holding the ' +
    'compose YAML and the template configuration (TOML: `[variables]`, `[[config.domains]]`, ' +
    '`[[config.env]]`, `[[config.mounts]]`); helpers such as `${password:32}` get fresh values. ' +
    "The stack's compose file becomes the template's (`sourceType` becomes `raw`) and its `env` " +
    "is replaced by the template's; the template's domains are added (plain HTTP, " +
    '`certificateType: none`; change them with domain.update). Everything is stored together or ' +
    'nothing is: a template that cannot be read or processed, or a domain whose host and path ' +
    'are already routed on the server, is BAD_REQUEST naming `base64`. Templates with ' +
    '`[[config.mounts]]` are refused for now: the files beside the compose file are not stored yet.',
  input: z.object({ base64: z.string(), composeId: RequiredId }),
  output: TemplateStack,
  example: { base64: TEMPLATE, composeId: 'cmp_example' },
});
