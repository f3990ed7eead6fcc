/**
 * Decides when a taken-in command runs (ARCHITECTURE.md, "Commands" 5; REFERENCE.md,
 * "Deploy queue"): commands of one workload run strictly one after another, in arrival
 * order; commands of different workloads may run side by side; at most `maxSlots`
 * slot-taking commands (deploys) run at once on this server. A command that waits for a
 * slot holds back the later commands of its own workload only. Waiting commands of a
 * workload can be taken out of the queue (removeWaiting, for CleanQueue and CancelWorkload).
 * A host-wide task (a cleanup) can hold the slots (`withSlotsHeld`): it runs once no
 * slot-taking command runs, and none starts until it ends.
 */

export interface ScheduledCommand {
  id: string;
  /** The FIFO key; commands with the same key never overlap. */
  workloadKey: string;
  /** Whether it takes one of the server's deploy slots. */
  takesSlot: boolean;
}

export interface SchedulerOptions {
  maxSlots: number;
  /** Runs one command; the scheduler moves on when the promise settles (a rejection is logged by the caller). */
  run: (command: ScheduledCommand) => Promise<void>;
}

export class CommandScheduler {
  private readonly waiting: ScheduledCommand[] = [];
  private readonly runningKeys = new Set<string>();
  private readonly running = new Map<string, Promise<void>>();
  private slotsInUse = 0;
  private stopped = false;
  private readonly known = new Set<string>();
  /** Host-wide tasks holding (or waiting to hold) the deploy slots. */
  private holds = 0;
  private readonly slotWaiters = new Set<() => void>();

  constructor(private readonly options: SchedulerOptions) {
    if (!Number.isInteger(options.maxSlots) || options.maxSlots < 1) {
      throw new RangeError('maxSlots must be a whole number of at least 1');
    }
  }

  /** Queues a command; a command id already queued or running is ignored (false). */
  enqueue(command: ScheduledCommand): boolean {
    if (this.stopped || this.known.has(command.id)) return false;
    this.known.add(command.id);
    this.waiting.push(command);
    this.pump();
    return true;
  }

  /**
   * Takes the waiting commands of one workload out of the queue (CleanQueue), in queue order;
   * the running one is not touched. They will not run: the caller ends them, then calls
   * `forget` for each (until then the same id cannot be queued again, e.g. by a redelivery
   * that arrives before the caller journaled the end).
   */
  removeWaiting(workloadKey: string, limit = Infinity): ScheduledCommand[] {
    const removed = this.waiting.filter((c) => c.workloadKey === workloadKey).slice(0, limit);
    for (const command of removed) this.waiting.splice(this.waiting.indexOf(command), 1);
    return removed;
  }

  /** The workload's first waiting command (the one that runs next), without taking it out. */
  firstWaiting(workloadKey: string): ScheduledCommand | undefined {
    return this.waiting.find((c) => c.workloadKey === workloadKey);
  }

  /** Lets a removed command's id be queued again (see removeWaiting). */
  forget(id: string): void {
    if (!this.running.has(id) && !this.waiting.some((c) => c.id === id)) this.known.delete(id);
  }

  /** Whether the id is waiting or running here. */
  has(id: string): boolean {
    return this.known.has(id);
  }

  get waitingCount(): number {
    return this.waiting.length;
  }

  get runningCount(): number {
    return this.running.size;
  }

  /**
   * Runs `task` while no slot-taking command runs: from the call on, none starts; the task
   * begins once those running have ended (within `timeoutMs`, else a SlotsBusyError and
   * nothing ran). Others (stop, start…) go on. Resolves with how long it waited and the result.
   */
  async withSlotsHeld<T>(task: () => Promise<T>, timeoutMs: number): Promise<{ waitedMs: number; result: T }> {
    this.holds++;
    const began = Date.now();
    try {
      await this.slotsFree(timeoutMs);
      const waitedMs = Date.now() - began;
      return { waitedMs, result: await task() };
    } finally {
      this.holds--;
      this.pump();
    }
  }

  private slotsFree(timeoutMs: number): Promise<void> {
    if (this.slotsInUse === 0) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const check = () => {
        if (this.slotsInUse > 0) return;
        clearTimeout(timer);
        this.slotWaiters.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        this.slotWaiters.delete(check);
        reject(new SlotsBusyError(this.slotsInUse, timeoutMs));
      }, timeoutMs);
      this.slotWaiters.add(check);
    });
  }

  /** Starts nothing more; resolves when what runs has settled. Waiting commands stay unrun. */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.allSettled([...this.running.values()]);
  }

  /** Resolves when nothing waits or runs (for tests and orderly shutdown). */
  async idle(): Promise<void> {
    while (this.running.size > 0 || (this.waiting.length > 0 && !this.stopped)) {
      await Promise.race([...this.running.values()].map((p) => p.catch(() => {})));
    }
  }

  private pump(): void {
    if (this.stopped) return;
    const blockedKeys = new Set<string>();
    for (let i = 0; i < this.waiting.length; ) {
      const command = this.waiting[i];
      const key = command.workloadKey;
      const free = !this.runningKeys.has(key) && !blockedKeys.has(key);
      const slot = !command.takesSlot || (this.holds === 0 && this.slotsInUse < this.options.maxSlots);
      if (free && slot) {
        this.waiting.splice(i, 1);
        this.start(command);
        continue;
      }
      // Later commands of this workload wait behind this one.
      blockedKeys.add(key);
      i++;
    }
  }

  private start(command: ScheduledCommand): void {
    this.runningKeys.add(command.workloadKey);
    if (command.takesSlot) this.slotsInUse++;
    const run = Promise.resolve()
      .then(() => this.options.run(command))
      .catch(() => {})
      .finally(() => {
        this.runningKeys.delete(command.workloadKey);
        if (command.takesSlot) this.slotsInUse--;
        for (const check of [...this.slotWaiters]) check();
        this.running.delete(command.id);
        this.known.delete(command.id);
        this.pump();
      });
    this.running.set(command.id, run);
  }
}

/** Builds or deploys still ran when a host-wide task's wait ended. */
export class SlotsBusyError extends Error {
  constructor(running: number, timeoutMs: number) {
    super(`${running} build or deploy command(s) still ran after ${Math.round(timeoutMs / 1000)} s`);
  }
}
