import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Empty } from '../primitives.js';
import { PROXY_FILES_NOTE, ProxyServerId } from './proxy.js';

export const reloadProxy = defineContract({
  method: 'POST',
  summary: 'Load the reverse-proxy configuration again',
  description:
    'Renders the whole proxy configuration again (from the domains last sent to the server and ' +
    'the files) and loads it into the proxy; a proxy container that is not running is brought ' +
    'back first. A running proxy is never restarted, so no connection is dropped. ' +
    '`serverId` (optional) picks the server. ' +
    PROXY_FILES_NOTE,
  input: z.object({ serverId: ProxyServerId }),
  output: Empty,
  access: { role: 'admin' },
  example: {},
});
