import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Empty, NonEmpty } from '../primitives.js';
import { MIDDLEWARES_FILE_NOTE, PROXY_FILES_NOTE } from './proxy.js';

export const updateMiddlewareProxyConfig = defineContract({
  method: 'POST',
  summary: "Replace the shared middlewares of the platform host's reverse proxy (middlewares.json)",
  description:
    `Writes \`proxyConfig\` as \`middlewares.json\` on the platform host and reloads its proxy with it. ` +
    `${MIDDLEWARES_FILE_NOTE} Another server's middlewares are written with settings.updateProxyFile ` +
    `and its serverId. ${PROXY_FILES_NOTE}`,
  input: z.object({
    proxyConfig: NonEmpty.describe('the new text of middlewares.json: a JSON object, name to an array of Caddy handlers'),
  }),
  output: Empty,
  access: { role: 'admin' },
  example: {
    proxyConfig: '{"no-frames":[{"handler":"headers","response":{"set":{"X-Frame-Options":["DENY"]}}}]}',
  },
});
