import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { MountRecord } from './record.js';

export const all = defineContract({
  method: 'GET',
  summary: 'The mounts of an application',
  description: 'In the order they were added; secret file contents are not answered.',
  input: z.object({ applicationId: RequiredId }),
  output: z.array(MountRecord),
  example: { applicationId: 'app_example' },
  extension: true,
});
