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
});
