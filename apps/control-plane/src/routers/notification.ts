import type { RouterHandlers } from '../http/context.js';
import type { MetricsTokenService } from '../services/metrics-tokens.js';

export const notificationHandlers = (metrics: MetricsTokenService): RouterHandlers<'notification'> => ({
  receiveNotification: (input) => metrics.receive(input.Token),
});
