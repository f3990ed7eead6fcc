import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { MountRecord } from './record.js';

export const remove = defineContract({
  method: 'POST',
  summary: 'Remove a mount from an application',
  description:
    'Takes effect at the next deploy. A named volume is not removed with its mount: it goes with the ' +
    'application when deleted with `deleteVolumes`. Answers the removed mount.',
  input: z.object({ mountId: RequiredId }),
  output: MountRecord,
  access: { grant: 'canCreateServices' },
  example: { mountId: 'mnt_example' },
  extension: true,
});
