import { z } from 'zod';
import { defineContract } from '../contract.js';

/** One template of a catalog, as listed (its files are read when it is deployed). */
export const TemplateSummary = z.object({
  id: z.string().describe('the id compose.deployTemplate takes'),
  name: z.string(),
  version: z.string().describe("the version of the software it runs, as the catalog gives it ('' when none)"),
  description: z.string(),
  tags: z.array(z.string()).describe('lower-case'),
  logo: z.string().nullable().describe('an http(s) URL of a logo image, or null'),
  links: z.record(z.string(), z.string()).describe('named http(s) links, such as `website`, `github`, `docs`'),
  source: z.enum(['bundled', 'remote']).describe('`bundled`: shipped with the platform; `remote`: read from a catalog URL'),
});

export const templates = defineContract({
  method: 'GET',
  summary: 'The templates of a template catalog',
  description:
    'Query parameters: `baseUrl`, the catalog to read (omitted: ' +
    'the catalog shipped with the platform, merged with the operator\'s catalog when ' +
    '`SKIFF_TEMPLATES_URL` is set, whose templates replace bundled ones of the same id), and ' +
    '`tags`, repeated to list only templates carrying at least one of those tags (omitted: ' +
    'every template). A catalog URL holds `meta.json` (the list) and ' +
    '`blueprints/<id>/docker-compose.yml` and `blueprints/<id>/template.toml` per template. ' +
    'A `baseUrl` other than `SKIFF_TEMPLATES_URL` must reach public addresses only (link-local and ' +
    'cloud-metadata addresses are refused for any catalog); a catalog that cannot be read is ' +
    'BAD_REQUEST naming `baseUrl` with the reason.',
  input: z.object({
    baseUrl: z.string().optional(),
    tags: z.array(z.string()).optional(),
  }),
  output: z.array(TemplateSummary),
  example: { tags: ['monitoring'] },
});
