import { describe, expect, it } from 'vitest';
import { CommandScheduler, type ScheduledCommand, SlotsBusyError } from './scheduler.js';

/** A scheduler whose runs end when the test says so, recording what started. */
function harness(maxSlots: number) {
  const started: string[] = [];
  const finishers = new Map<string, () => void>();
  const scheduler = new CommandScheduler({
    maxSlots,
    run: (c) =>
      new Promise<void>((resolve) => {
        started.push(c.id);
        finishers.set(c.id, resolve);
      }),
  });
  const finish = async (id: string) => {
    const done = finishers.get(id);
    if (!done) throw new Error(`${id} is not running`);
    done();
    // Let the scheduler's settle handlers run.
    for (let i = 0; i < 5; i++) await Promise.resolve();
  };
  const settle = async () => {
    for (let i = 0; i < 5; i++) await Promise.resolve();
  };
  return { scheduler, started, finish, settle };
}

const deploy = (id: string, workloadKey: string): ScheduledCommand => ({ id, workloadKey, takesSlot: true });
const light = (id: string, workloadKey: string): ScheduledCommand => ({ id, workloadKey, takesSlot: false });

describe('CommandScheduler', () => {
  it('runs the commands of one workload one after another, in order', async () => {
    const { scheduler, started, finish, settle } = harness(4);
    scheduler.enqueue(deploy('a1', 'application:A'));
    scheduler.enqueue(deploy('a2', 'application:A'));
    scheduler.enqueue(light('a3', 'application:A'));
    await settle();
    expect(started).toEqual(['a1']);
    await finish('a1');
    expect(started).toEqual(['a1', 'a2']);
    await finish('a2');
    expect(started).toEqual(['a1', 'a2', 'a3']);
  });

  it('runs different workloads side by side, at most maxSlots deploys at once', async () => {
    const { scheduler, started, finish, settle } = harness(2);
    for (const key of ['A', 'B', 'C', 'D']) scheduler.enqueue(deploy(`d-${key}`, `application:${key}`));
    await settle();
    expect(started).toEqual(['d-A', 'd-B']);
    expect(scheduler.runningCount).toBe(2);
    expect(scheduler.waitingCount).toBe(2);
    await finish('d-B');
    expect(started).toEqual(['d-A', 'd-B', 'd-C']);
    await finish('d-A');
    expect(started).toEqual(['d-A', 'd-B', 'd-C', 'd-D']);
  });

  it('lets commands that take no slot pass deploys waiting for one, but never within a workload', async () => {
    const { scheduler, started, finish, settle } = harness(1);
    scheduler.enqueue(deploy('d-A', 'application:A'));
    scheduler.enqueue(deploy('d-B', 'application:B'));
    scheduler.enqueue(light('stop-B', 'application:B'));
    scheduler.enqueue(light('stop-C', 'application:C'));
    await settle();
    // d-B waits for the slot; stop-B waits behind d-B; stop-C runs.
    expect(started).toEqual(['d-A', 'stop-C']);
    await finish('d-A');
    expect(started).toEqual(['d-A', 'stop-C', 'd-B']);
    await finish('d-B');
    expect(started).toEqual(['d-A', 'stop-C', 'd-B', 'stop-B']);
  });

  it('ignores an id that is already queued or running, and takes it again once it ended', async () => {
    const { scheduler, started, finish, settle } = harness(1);
    expect(scheduler.enqueue(deploy('x', 'application:A'))).toBe(true);
    expect(scheduler.enqueue(deploy('x', 'application:A'))).toBe(false);
    await settle();
    expect(scheduler.has('x')).toBe(true);
    await finish('x');
    expect(scheduler.has('x')).toBe(false);
    expect(started).toEqual(['x']);
  });

  it('moves on when a run fails', async () => {
    const started: string[] = [];
    const scheduler = new CommandScheduler({
      maxSlots: 1,
      run: async (c) => {
        started.push(c.id);
        if (c.id === 'bad') throw new Error('boom');
      },
    });
    scheduler.enqueue(deploy('bad', 'application:A'));
    scheduler.enqueue(deploy('good', 'application:A'));
    await scheduler.idle();
    expect(started).toEqual(['bad', 'good']);
  });

  it('starts nothing after stop and waits for what runs', async () => {
    const { scheduler, started, finish, settle } = harness(1);
    scheduler.enqueue(deploy('a', 'application:A'));
    scheduler.enqueue(deploy('b', 'application:B'));
    await settle();
    let stopped = false;
    const stopping = scheduler.stop().then(() => (stopped = true));
    await settle();
    expect(stopped).toBe(false);
    await finish('a');
    await stopping;
    expect(started).toEqual(['a']);
    expect(scheduler.enqueue(deploy('c', 'application:C'))).toBe(false);
  });

  it("takes a workload's waiting commands out of the queue, leaving the running one and other workloads", async () => {
    const { scheduler, started, finish, settle } = harness(1);
    scheduler.enqueue(deploy('a1', 'application:A'));
    scheduler.enqueue(deploy('a2', 'application:A'));
    scheduler.enqueue(deploy('b1', 'application:B'));
    scheduler.enqueue(light('a3', 'application:A'));
    await settle();
    expect(started).toEqual(['a1']);

    expect(scheduler.removeWaiting('application:A').map((c) => c.id)).toEqual(['a2', 'a3']);
    expect(scheduler.removeWaiting('application:A')).toEqual([]);
    expect(scheduler.waitingCount).toBe(1);
    // Until the caller forgets them, the removed ids cannot be queued again (a redelivery).
    expect(scheduler.enqueue(deploy('a2', 'application:A'))).toBe(false);
    scheduler.forget('a2');
    scheduler.forget('a3');
    // The running one cannot be forgotten.
    scheduler.forget('a1');
    expect(scheduler.has('a1')).toBe(true);

    await finish('a1');
    expect(started).toEqual(['a1', 'b1']);
    await finish('b1');
    await scheduler.idle();
    expect(started).toEqual(['a1', 'b1']);
    expect(scheduler.enqueue(light('a3', 'application:A'))).toBe(true);
    await settle();
    expect(started).toEqual(['a1', 'b1', 'a3']);
  });

  it('refuses a limit below one', () => {
    expect(() => new CommandScheduler({ maxSlots: 0, run: async () => {} })).toThrow(RangeError);
  });

  it('runs a host-wide task only once the running deploys end, and starts no deploy meanwhile', async () => {
    const { scheduler, started, finish, settle } = harness(4);
    scheduler.enqueue(deploy('d1', 'application:A'));
    await settle();
    const events: string[] = [];
    const held = scheduler.withSlotsHeld(async () => {
      events.push(`task with ${started.join(',')}`);
      await settle();
      events.push('task end');
      return 7;
    }, 5_000);
    scheduler.enqueue(deploy('d2', 'application:B'));
    scheduler.enqueue(light('s1', 'application:C'));
    await settle();
    // The light command runs; the new deploy waits behind the hold, the task behind d1.
    expect(started).toEqual(['d1', 's1']);
    expect(events).toEqual([]);
    await finish('d1');
    const { result } = await held;
    expect(result).toBe(7);
    expect(events).toEqual(['task with d1,s1', 'task end']);
    await settle();
    expect(started).toEqual(['d1', 's1', 'd2']);
  });

  it('gives up a host-wide task whose wait for running deploys times out, and runs nothing of it', async () => {
    const { scheduler, started, settle } = harness(4);
    scheduler.enqueue(deploy('d1', 'application:A'));
    await settle();
    let ran = false;
    await expect(scheduler.withSlotsHeld(async () => (ran = true), 20)).rejects.toBeInstanceOf(SlotsBusyError);
    expect(ran).toBe(false);
    scheduler.enqueue(deploy('d2', 'application:B'));
    await settle();
    expect(started).toEqual(['d1', 'd2']);
  });
});
