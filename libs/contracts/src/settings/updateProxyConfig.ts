import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Empty, NonEmpty } from '../primitives.js';
import { GLOBAL_FILE_NOTE, PROXY_FILES_NOTE } from './proxy.js';

export const updateProxyConfig = defineContract({
  method: 'POST',
  summary: "Replace the global options of the platform host's reverse proxy (global.json)",
  description:
    `Writes \`proxyConfig\` as \`global.json\` on the platform host and reloads its proxy with it. ${GLOBAL_FILE_NOTE} ` +
    "Another server's file is written with settings.updateProxyFile and its serverId. " +
    PROXY_FILES_NOTE,
  input: z.object({ proxyConfig: NonEmpty.describe('the new text of global.json: a JSON object') }),
  output: Empty,
  access: { role: 'admin' },
  example: { proxyConfig: '{"logging":{"logs":{"default":{"level":"WARN"}}}}' },
});
