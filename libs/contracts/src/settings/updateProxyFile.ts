import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Empty, NonEmpty } from '../primitives.js';
import { PROXY_FILES_NOTE, ProxyServerId } from './proxy.js';

export const updateProxyFile = defineContract({
  method: 'POST',
  summary: "Replace one file of a reverse proxy's configuration directory",
  description:
    'Only `global.json`, `platform.json` and `middlewares.json` can be written (named relative ' +
    'to the directory or absolute as settings.readDirectories shows them); any other path, one ' +
    'leaving the directory, a symbolic link or a NUL byte is a BAD_REQUEST naming `path`. ' +
    '`proxyConfig` is the new content, at most 512 KiB. `serverId` (optional: the ' +
    'files live on each server) picks the server. ' +
    PROXY_FILES_NOTE,
  input: z.object({
    path: NonEmpty.describe('global.json, platform.json or middlewares.json'),
    proxyConfig: NonEmpty.describe('the new content of the file'),
    serverId: ProxyServerId,
  }),
  output: Empty,
  access: { grant: 'canAccessToProxyFiles' },
  example: {
    path: 'middlewares.json',
    proxyConfig: '{"no-frames":[{"handler":"headers","response":{"set":{"X-Frame-Options":["DENY"]}}}]}',
  },
});
