import type { NotificationKind } from '@skiff/db';
import type { Logger } from 'pino';
import type { MetricsTokenService } from '../identity/metrics-tokens.js';
import type { ChannelSender } from '../notifications/channels/channel-sender.js';
import type { ServiceDeps } from '../shared/deps.js';
import { DeliveryWorker, type DeliveryWorkerOptions } from './delivery-worker.js';
import { EventService } from './event-service.js';
import { EventSignal } from './events.js';

/**
 * Event delivery to notification channels: the sender of each channel kind (a kind without
 * one keeps its deliveries pending), and the worker's timings (tests shorten them).
 * `start: false` runs no worker in this process.
 */
export interface EventOptions {
  senders?: Partial<Record<NotificationKind, ChannelSender>>;
  start?: boolean;
  worker?: Partial<Omit<DeliveryWorkerOptions, 'db' | 'secrets' | 'senders' | 'log' | 'signal'>>;
  /** The event stream's heartbeat and poll (ms), and its streams per key. */
  stream?: { heartbeatMs?: number; pollMs?: number; maxStreamsPerKey?: number };
}

/** The signal, the service and the (not yet started) delivery worker, for the composition root. */
export function buildEvents(deps: ServiceDeps, metrics: MetricsTokenService, log: Logger, options: EventOptions = {}) {
  const signal = new EventSignal();
  const service = new EventService(deps, metrics, signal);
  const worker = new DeliveryWorker({
    ...options.worker,
    db: deps.db,
    secrets: deps.secrets,
    senders: options.senders ?? {},
    log: log.child({ component: 'event-delivery' }),
    signal,
    clock: options.worker?.clock ?? deps.clock,
  });
  return { signal, service, worker, stream: { events: service, signal, ...options.stream } };
}
