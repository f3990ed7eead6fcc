import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Empty, NonEmpty } from '../primitives.js';
import { PLATFORM_FILE_NOTE, PROXY_FILES_NOTE } from './proxy.js';

export const updateWebServerProxyConfig = defineContract({
  method: 'POST',
  summary: "Replace the handlers of the platform's own site in its reverse proxy (platform.json)",
  description:
    `Writes \`proxyConfig\` as \`platform.json\` on the platform host and reloads its proxy with it. ` +
    `${PLATFORM_FILE_NOTE} ${PROXY_FILES_NOTE}`,
  input: z.object({ proxyConfig: NonEmpty.describe('the new text of platform.json: a JSON array of Caddy handlers') }),
  output: Empty,
  access: { role: 'admin' },
  example: {
    proxyConfig: '[{"handler":"headers","response":{"set":{"X-Frame-Options":["DENY"]}}}]',
  },
});
