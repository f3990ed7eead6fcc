/**
 * The query strings of the log streams (`GET /api/logs.*`, server-sent events, beyond the
 * spec). They are routes rather than operations, since they answer a stream, not one JSON
 * result; their inputs follow the operations' rules (one parameter per field, numbers and
 * booleans parsed strictly, unknown fields refused).
 */
import { z } from 'zod';
import { ContainerRef, Id, RequiredId } from './primitives.js';

const Count = z.string().regex(/^\d{1,5}$/, 'a whole number').transform(Number).pipe(z.number().int().min(0).max(10_000));
const Bool = z.enum(['true', 'false']).transform((v) => v === 'true');
const Since = z
  .string()
  .refine((v) => /^\d{1,12}$/.test(v) || !Number.isNaN(Date.parse(v)), 'Unix seconds or an ISO time')
  .transform((v) => (/^\d+$/.test(v) ? Number(v) : Math.floor(Date.parse(v) / 1000)));

const runtime = {
  tail: Count.optional().describe('Lines from the end of the log to start with (default 100, at most 10000)'),
  since: Since.optional().describe('Only lines since then: Unix seconds or an ISO time'),
  follow: Bool.optional().describe('Keep streaming new lines (default false)'),
};

export const LogQueries = {
  /** A service's runtime log: an application, a cache instance, or one service of a compose stack. */
  service: z
    .object({
      applicationId: RequiredId.optional(),
      cacheId: RequiredId.optional(),
      composeId: RequiredId.optional(),
      serviceName: ContainerRef.optional().describe('With composeId: the service of the stack'),
      ...runtime,
    })
    .strict(),
  /** One container's runtime log (container.getContainers lists them). */
  container: z.object({ containerId: ContainerRef, serverId: Id.optional(), ...runtime }).strict(),
  /** A deployment's build and deploy log, followed while it runs. */
  deployment: z.object({ deploymentId: RequiredId, follow: Bool.optional() }).strict(),
};

export type LogQuery<K extends keyof typeof LogQueries> = z.output<(typeof LogQueries)[K]>;
