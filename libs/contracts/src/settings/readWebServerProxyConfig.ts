import { z } from 'zod';
import { defineContract } from '../contract.js';
import { PLATFORM_FILE_NOTE, PROXY_FILES_NOTE, ProxyFileText } from './proxy.js';

export const readWebServerProxyConfig = defineContract({
  method: 'GET',
  summary: "The handlers of the platform's own site in its reverse proxy (platform.json)",
  description: `Answers the text of \`platform.json\` on the platform host. ${PLATFORM_FILE_NOTE} ${PROXY_FILES_NOTE}`,
  input: z.object({}),
  output: ProxyFileText,
  access: { role: 'admin' },
  example: {},
});
