import { describe, expect, it } from 'vitest';
import { WakeableSleep } from './wakeable-sleep.js';

describe('WakeableSleep', () => {
  it('sleeps the time it is given', async () => {
    const started = Date.now();
    await new WakeableSleep().sleep(30);
    expect(Date.now() - started).toBeGreaterThanOrEqual(25);
  });

  it('ends the current sleep at once when woken', async () => {
    const sleeper = new WakeableSleep();
    const started = Date.now();
    const slept = sleeper.sleep(60_000);
    sleeper.wake();
    await slept;
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('does nothing when woken while nothing sleeps', async () => {
    const sleeper = new WakeableSleep();
    sleeper.wake();
    const started = Date.now();
    await sleeper.sleep(30);
    expect(Date.now() - started).toBeGreaterThanOrEqual(25);
  });
});
