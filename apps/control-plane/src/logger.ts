import { logRedaction } from '@skiff/domain';
import pino, { type DestinationStream, type Logger } from 'pino';

/**
 * The control plane's logger, made once (main.ts; the test harness makes its own here too):
 * every field that can hold a secret is redacted (libs/domain log-redaction.ts).
 */
export function createLogger(options: { level: string; base?: Record<string, unknown> }, destination?: DestinationStream): Logger {
  const settings = { level: options.level, ...(options.base ? { base: options.base } : {}), ...logRedaction() };
  return destination ? pino(settings, destination) : pino(settings);
}
