/**
 * Threshold alerts with hysteresis and a minimum duration: a value must stay at or above
 * the threshold for `minDurationMs` to cross it (one `crossed`), and then stay below
 * `threshold - hysteresis` for `minDurationMs` to recover (one `recovered`). Samples in
 * between change nothing, so a server hovering around its threshold alerts once.
 */
export type ThresholdKind = 'cpu' | 'memory';
export type ThresholdState = 'crossed' | 'recovered';

export interface ThresholdRules {
  minDurationMs: number;
  /** Percentage points under the threshold a value must fall to recover. */
  hysteresis: number;
}

export class ThresholdWatch {
  private crossed = false;
  /** Since when the value has been past the line that would change the state. */
  private since: number | null = null;

  constructor(private readonly rules: ThresholdRules) {}

  get isCrossed(): boolean {
    return this.crossed;
  }

  /** The state change this sample completes, if any. */
  observe(value: number, threshold: number, atMs: number): ThresholdState | null {
    const pastLine = this.crossed ? value < threshold - this.rules.hysteresis : value >= threshold;
    if (!pastLine) {
      this.since = null;
      return null;
    }
    this.since ??= atMs;
    if (atMs - this.since < this.rules.minDurationMs) return null;
    this.since = null;
    this.crossed = !this.crossed;
    return this.crossed ? 'crossed' : 'recovered';
  }
}

export interface ThresholdEvent {
  serverId: string;
  kind: ThresholdKind;
  value: number;
  threshold: number;
  state: ThresholdState;
}

/** One watch per server and kind; a threshold removed forgets its state. */
export class ThresholdWatches {
  private readonly watches = new Map<string, ThresholdWatch>();

  constructor(private readonly rules: ThresholdRules) {}

  observe(serverId: string, kind: ThresholdKind, value: number, threshold: number | null, atMs: number): ThresholdEvent | null {
    const key = `${serverId}\u0000${kind}`;
    if (threshold === null) {
      this.watches.delete(key);
      return null;
    }
    let watch = this.watches.get(key);
    if (!watch) this.watches.set(key, (watch = new ThresholdWatch(this.rules)));
    const state = watch.observe(value, threshold, atMs);
    return state ? { serverId, kind, value, threshold, state } : null;
  }

  /** Forgets a server's states (its monitoring was cleaned). */
  forget(serverId: string): void {
    for (const key of [...this.watches.keys()]) if (key.startsWith(`${serverId}\u0000`)) this.watches.delete(key);
  }
}
