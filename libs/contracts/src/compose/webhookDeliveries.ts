import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { WebhookDeliveries } from '../application/webhookDeliveries.js';

export const webhookDeliveries = defineContract({
  method: 'GET',
  summary: "The stack's received webhook events and what each decided",
  description:
    'Every push, tag or ping received for the stack, with the decision (`deployed` and its ' +
    'deployment, `ignored` or `refused`) and the reason. Access follows access to the stack.',
  input: z.object({ composeId: RequiredId }),
  output: WebhookDeliveries,
  example: { composeId: 'cmp_example' },
  extension: true,
});
