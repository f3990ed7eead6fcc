import { z } from 'zod';
import { defineContract } from '../contract.js';
import { MIDDLEWARES_FILE_NOTE, PROXY_FILES_NOTE, ProxyFileText } from './proxy.js';

export const readMiddlewareProxyConfig = defineContract({
  method: 'GET',
  summary: "The shared middlewares of the platform host's reverse proxy (middlewares.json)",
  description:
    `Answers the text of \`middlewares.json\` on the platform host. ${MIDDLEWARES_FILE_NOTE} ` +
    "Another server's middlewares are read with settings.readProxyFile and its serverId. " +
    PROXY_FILES_NOTE,
  input: z.object({}),
  output: ProxyFileText,
  access: { role: 'admin' },
  example: {},
});
