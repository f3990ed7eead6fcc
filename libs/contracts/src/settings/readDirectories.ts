import { z } from 'zod';
import { defineContract } from '../contract.js';
import { PROXY_FILES_NOTE, ProxyFileTree, ProxyServerId } from './proxy.js';

export const readDirectories = defineContract({
  method: 'GET',
  summary: "The files and directories of a reverse proxy's configuration directory",
  description:
    "Lists the proxy's configuration directory as a tree; each entry's `path` is what " +
    'settings.readProxyFile and updateProxyFile take. ' +
    '`serverId` (optional) picks the server. ' +
    PROXY_FILES_NOTE,
  input: z.object({ serverId: ProxyServerId }),
  output: ProxyFileTree,
  access: { grant: 'canAccessToProxyFiles' },
  example: { serverId: 'srv_example' },
});
