import type { RouterHandlers } from '../http/context.js';
import type { MetricsService } from '../services/metrics/index.js';

export const userMetricsHandlers = (metrics: MetricsService): RouterHandlers<'user'> => ({
  getServerMetrics: (input, { principal }) => metrics.getServerMetrics(principal, input),
  getContainerMetrics: (input, { principal }) => metrics.getContainerMetrics(principal, input),
});

export const settingsMetricsHandlers = (metrics: MetricsService): RouterHandlers<'settings'> => ({
  cleanMonitoring: (input, { principal }) => metrics.cleanMonitoring(principal, input),
  updateMetricsThresholds: (input, { principal }) => metrics.updateThresholds(principal, input),
});
