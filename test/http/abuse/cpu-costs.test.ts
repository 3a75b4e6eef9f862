import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { CpuCosts } from '../../helpers/abuse/cpu-costs.js';
import type { AbuseRequest, AbuseResponse } from '../../helpers/abuse/requests.js';

/** Spends about `ms` of CPU on this thread. */
function burn(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // busy
  }
}

/** A stand-in for a fresh app: each send costs `costMs` and answers `status`. */
function freshApp(costMs: number, status: number) {
  let sends = 0;
  return {
    sends: () => sends,
    make: async () => ({
      send: async (_request: AbuseRequest): Promise<AbuseResponse> => {
        sends += 1;
        burn(costMs);
        return { statusCode: status, headers: {}, body: '' };
      },
      close: async () => {},
    }),
  };
}

const post: AbuseRequest = { method: 'POST', url: '/registry/submit-passport', payload: '{"address":"0x"}' };

describe('CPU outliers of the abuse run', () => {
  it('clears an accepted POST whose replay is accepted again with the same status, under the limit', async () => {
    const costs = new CpuCosts();
    costs.add('submit', post, 80, 200);
    const app = freshApp(1, 200);
    expect(await costs.confirmedOver(50, app.make)).toEqual([]);
    expect(app.sends()).toBe(1);
  });

  it('keeps an accepted POST standing when its replay is refused (other work: a used nonce, a duplicate)', async () => {
    const costs = new CpuCosts();
    costs.add('submit', post, 80, 200);
    const app = freshApp(1, 409);
    const over = await costs.confirmedOver(50, app.make);
    expect(over.map((o) => o.ms)).toEqual([80]);
    expect(app.sends()).toBe(3);
  });

  it('keeps a request that is expensive every time, and clears a refusal whose replay is cheap', async () => {
    const costs = new CpuCosts();
    costs.add('refused', { method: 'POST', url: '/x', payload: '{}' }, 90, 400);
    const expensive = freshApp(60, 400);
    const over = await costs.confirmedOver(50, expensive.make);
    expect(over).toHaveLength(1);
    expect(over[0]!.ms).toBeGreaterThan(50);
    expect(await costs.confirmedOver(50, freshApp(1, 500).make)).toEqual([]);
  });

  it('takes the full garbage collections a request met out of its cost, and nothing else', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    // A heap worth collecting: each full collection of it takes milliseconds.
    const heap = Array.from({ length: 300_000 }, (_, i) => ({ i, s: `x${i}` }));
    const costs = new CpuCosts();
    const collected = await costs.measure('signed in', post, async () => {
      for (let i = 0; i < 5; i++) gc();
      return { statusCode: 200, headers: {}, body: '' };
    });
    expect(collected.statusCode).toBe(200);
    const busy = await costs.measure('busy', post, async () => {
      burn(30);
      return { statusCode: 200, headers: {}, body: '' };
    });
    expect(busy.statusCode).toBe(200);
    // The collections are reported a moment later.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const [first, second] = costs.worst();
    const gcCase = [first, second].find((w) => w!.id === 'signed in')!;
    expect(heap.length).toBe(300_000);
    expect(gcCase.fullGcMs).toBeGreaterThan(5);
    // Replays are refused (a used nonce): only what was measured counts.
    const over = await costs.confirmedOver(5, freshApp(1, 409).make);
    expect(over.map((o) => o.id)).toEqual(['busy']);
  });
});
