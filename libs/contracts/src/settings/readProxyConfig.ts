import { z } from 'zod';
import { defineContract } from '../contract.js';
import { GLOBAL_FILE_NOTE, PROXY_FILES_NOTE, ProxyFileText } from './proxy.js';

export const readProxyConfig = defineContract({
  method: 'GET',
  summary: "The global options of the platform host's reverse proxy (global.json)",
  description:
    `Answers the text of \`global.json\` on the platform host. ${GLOBAL_FILE_NOTE} Another ` +
    "server's file is read with settings.readProxyFile and its serverId. " +
    PROXY_FILES_NOTE,
  input: z.object({}),
  output: ProxyFileText,
  access: { role: 'admin' },
  example: {},
});
