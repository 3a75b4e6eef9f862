import { describe, expect, it } from 'vitest';
import { PollingLoop } from '../../src/events/polling-loop.js';

const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('PollingLoop', () => {
  it('coalesces wake-ups during a pass into one more pass, and runs none before start or after stop', async () => {
    let passes = 0;
    let release!: () => void;
    const loop = new PollingLoop(
      async () => {
        passes++;
        if (passes === 1) await new Promise<void>((resolve) => (release = resolve));
      },
      { pollMs: 60_000, timer: 'restart', onError: () => {} },
    );
    loop.wake();
    expect(passes).toBe(0);
    expect(loop.start()).toBe(true);
    expect(loop.start()).toBe(false);
    expect(passes).toBe(1);
    loop.wake();
    loop.wake();
    loop.wake();
    release();
    await loop.pumping;
    expect(passes).toBe(2);
    await loop.stop();
    loop.wake();
    expect(loop.pumping).toBeNull();
    expect(passes).toBe(2);
  });

  it('polls by itself after an idle pass, and an error of a pass reaches onError without ending the loop', async () => {
    let passes = 0;
    const errors: unknown[] = [];
    const loop = new PollingLoop(
      async () => {
        passes++;
        if (passes === 1) throw new Error('boom');
      },
      { pollMs: 20, timer: 'restart', onError: (error) => errors.push(error) },
    );
    loop.start();
    await tick(150);
    await loop.stop();
    expect((errors[0] as Error).message).toBe('boom');
    expect(passes).toBeGreaterThanOrEqual(3);
    const after = passes;
    await tick(60);
    expect(passes).toBe(after);
  });

  it('keep: a loop woken more often than pollMs still gets its timed poll; restart: it does not', async () => {
    const polled = { keep: 0, restart: 0 };
    const loops = (['keep', 'restart'] as const).map(
      (timer) => new PollingLoop(async () => {}, { pollMs: 80, timer, onPoll: () => polled[timer]++, onError: () => {} }),
    );
    for (const loop of loops) loop.start();
    const until = Date.now() + 300;
    while (Date.now() < until) {
      for (const loop of loops) loop.wake();
      await tick(10);
    }
    for (const loop of loops) await loop.stop();
    expect(polled.keep).toBeGreaterThanOrEqual(2);
    expect(polled.restart).toBe(0);
  });
});
