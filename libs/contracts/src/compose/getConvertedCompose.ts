import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { ConvertedCompose } from './deployed.js';

export const getConvertedCompose = defineContract({
  method: 'GET',
  summary: 'The compose file exactly as it will be deployed',
  description:
    'The stored compose file (of a git source: as last fetched, see `fetchSourceType`) converted with ' +
    "the stack's settings: `randomize` with `suffix`, `isolatedDeployment` (with " +
    '`isolatedDeploymentsVolume`), and the services its domains route to joining the platform network ' +
    '(alias `<service>.<appName>`, the host the proxy dials). A domain added to a service reaches it ' +
    'from the next deploy on. Converting the converted file again changes nothing. An empty or ' +
    'invalid file is BAD_REQUEST naming `composeFile` (randomize without a suffix: `suffix`).',
  input: z.object({ composeId: RequiredId }),
  output: ConvertedCompose,
  example: { composeId: 'cmp_example' },
});
