import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';

/** One received webhook event and what it did to the workload. */
export const WebhookDeliveryRecord = z.object({
  webhookDeliveryId: z.string(),
  source: z.enum(['github', 'gitlab', 'bitbucket', 'gitea', 'token']).describe('the route it came through (`token`: the generic one)'),
  deliveryId: z.string().nullable().describe("the forge's delivery id"),
  event: z.string(),
  ref: z.string().nullable().describe('branch or tag'),
  commit: z.string().nullable(),
  decision: z.enum(['deployed', 'ignored', 'refused', 'preview']).describe('`preview`: a pull request created or removed a preview deployment'),
  reason: z.string().describe('why, in words: "ignored: branch dev is not main"'),
  deploymentId: z.string().nullable(),
  createdAt: z.string(),
});

export const WebhookDeliveries = z.object({
  webhookPath: z
    .string()
    .nullable()
    .describe('the generic deploy hook (`/webhooks/deploy/<kind>/<id>/<refreshToken>`); null without a refreshToken'),
  deliveries: z.array(WebhookDeliveryRecord).describe('newest first, the newest 100'),
});

export const webhookDeliveries = defineContract({
  method: 'GET',
  summary: "The application's received webhook events and what each decided",
  description:
    'Every push, tag or ping received for the application (through its forge route or its ' +
    'generic deploy hook), with the decision (`deployed` and its deployment, `ignored` or ' +
    '`refused`) and the reason. Access follows access to the application.',
  input: z.object({ applicationId: RequiredId }),
  output: WebhookDeliveries,
  example: { applicationId: 'app_example' },
  extension: true,
});
