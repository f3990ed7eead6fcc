/**
 * A sleep that can be cut short: a loop that backs off or polls sleeps with `sleep(ms)`,
 * and `wake()` (new work, or a stop) ends the current sleep at once. A wake while nothing
 * sleeps does nothing: the loop looks at its own state before it sleeps again.
 */
export class WakeableSleep {
  private wakeCurrent: (() => void) | null = null;

  /** Resolves after `ms`, or as soon as `wake` is called. */
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        if (this.wakeCurrent === done) this.wakeCurrent = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wakeCurrent = done;
    });
  }

  /** Ends the current sleep now; nothing when none runs. */
  wake(): void {
    this.wakeCurrent?.();
  }
}
