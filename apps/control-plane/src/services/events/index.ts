// Events: recorded in the transaction of their change, delivered to channels, streamed to API clients.
export { EventSignal, recordEvent, type NewEvent } from './events.js';
export { recordCrashLoop, recordDeploymentEnd } from './deployment-events.js';
export { DeliveryWorker, type DeliveryWorkerOptions } from './delivery-worker.js';
export { EventService, eventJson } from './event-service.js';
export { renderEvent } from './event-message.js';
export { buildEvents, type EventOptions } from './wiring.js';
