import { z } from 'zod';
import { defineContract } from '../contract.js';
import { NonEmpty } from '../primitives.js';
import { PROXY_FILES_NOTE, ProxyFileText, ProxyServerId } from './proxy.js';

export const readProxyFile = defineContract({
  method: 'GET',
  summary: "The content of one file of a reverse proxy's configuration directory",
  description:
    '`path` names a regular file inside the directory: relative to it (`global.json`), or ' +
    'absolute as settings.readDirectories shows it. A path leaving the directory (`..`, another ' +
    'absolute path), a symbolic link, a NUL byte or anything but a regular file is a BAD_REQUEST ' +
    'naming `path`. `serverId` (optional: the files live on each server) picks ' +
    'the server. ' +
    PROXY_FILES_NOTE,
  input: z.object({
    path: NonEmpty.describe('the file, relative to the configuration directory or absolute inside it'),
    serverId: ProxyServerId,
  }),
  output: ProxyFileText,
  access: { grant: 'canAccessToProxyFiles' },
  example: { path: 'middlewares.json', serverId: 'srv_example' },
});
