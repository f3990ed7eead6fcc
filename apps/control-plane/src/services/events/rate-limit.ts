/** A token bucket: `burst` messages at once, then one per `intervalMs`. Times are the caller's ms. */
export class TokenBucket {
  private tokens: number;
  private at: number;

  constructor(
    private readonly burst: number,
    private readonly intervalMs: number,
    now: number,
  ) {
    this.tokens = burst;
    this.at = now;
  }

  private refill(now: number): void {
    if (now > this.at) {
      this.tokens = Math.min(this.burst, this.tokens + (now - this.at) / this.intervalMs);
      this.at = now;
    }
  }

  /** Whole tokens available now. */
  available(now: number): number {
    this.refill(now);
    return Math.floor(this.tokens);
  }

  /** Takes a token when one is there. */
  take(now: number): boolean {
    this.refill(now);
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /** Ms until the next token. */
  waitMs(now: number): number {
    this.refill(now);
    return this.tokens >= 1 ? 0 : Math.ceil((1 - this.tokens) * this.intervalMs);
  }
}
