import type { Timestamp } from './gen/google/protobuf/timestamp.js';

/** Converts a Date to a protobuf Timestamp (seconds are a decimal string, forceLong=string). */
export function timestampFromDate(date: Date): Timestamp {
  const ms = date.getTime();
  if (!Number.isFinite(ms)) throw new RangeError('invalid date');
  const seconds = Math.floor(ms / 1000);
  return { seconds: String(seconds), nanos: (ms - seconds * 1000) * 1_000_000 };
}

/** Converts a protobuf Timestamp to a Date (millisecond precision; sub-millisecond nanos are dropped). */
export function timestampToDate(ts: Timestamp): Date {
  const seconds = Number(ts.seconds);
  if (!Number.isSafeInteger(seconds)) throw new RangeError(`invalid timestamp seconds: ${ts.seconds}`);
  return new Date(seconds * 1000 + Math.floor(ts.nanos / 1_000_000));
}
