import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { DeletedCompose } from './record.js';

export const delete_ = defineContract({
  method: 'POST',
  summary: 'Delete a compose stack with its services, domains and deployments',
  description:
    'Named volumes are kept unless `deleteVolumes` is true. Answers the deleted record with ' +
    '`deleteVolumes`; its domains and backups go with it.',
  input: z.object({ composeId: RequiredId, deleteVolumes: z.boolean().optional() }),
  output: DeletedCompose,
  access: { grant: 'canDeleteServices' },
  example: { composeId: 'cmp_example', deleteVolumes: false },
});
