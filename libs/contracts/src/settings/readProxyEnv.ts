import { z } from 'zod';
import { defineContract } from '../contract.js';
import { PROXY_FILES_NOTE, ProxyEnvironment, ProxyServerId } from './proxy.js';

export const readProxyEnv = defineContract({
  method: 'GET',
  summary: 'The environment variables of the reverse-proxy container',
  description:
    "Answers the environment of the server's proxy container (`skiff-proxy`), name to value. " +
    '`serverId` (optional) picks the server. ' +
    PROXY_FILES_NOTE,
  input: z.object({ serverId: ProxyServerId }),
  output: ProxyEnvironment,
  access: { role: 'admin' },
  example: {},
});
