// Metrics: the store of agents' samples, threshold alerts, and the operations reading them.
export { MetricsService, type MetricsOptions } from './metrics-service.js';
export { MetricsRetention } from './retention.js';
