import { describe, expect, it } from 'vitest';
import { type CandidateStamp, computeScore, type NullifierHold, type ScorerSettings } from '../../../src/scoring/scorers/engine.js';

const ADDRESS = '0xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
const OTHER = '0xbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb';
const NOW = new Date('2026-03-01T12:00:00.000Z');
const DAY = 86_400_000;
const days = (n: number) => new Date(NOW.getTime() + n * DAY);

let n = 0;
function stamp(provider: string, overrides: Partial<CandidateStamp> = {}): CandidateStamp {
  n += 1;
  return { id: `s${n}`, provider, nullifiers: [`v0:${provider}:${n}`], issuanceDate: days(-10), expirationDate: days(80), valid: true, ...overrides };
}

function run(stamps: CandidateStamp[], holds: Record<string, NullifierHold> = {}, scorer: Partial<ScorerSettings> = {}) {
  return computeScore({
    address: ADDRESS,
    scorer: { type: 'weighted', threshold: '20', weights: { A: '12.345675', B: '7.654321', C: '3' }, ...scorer },
    defaultWeights: new Map(),
    now: NOW,
    stamps,
    holds: new Map(Object.entries(holds)),
  });
}

describe('v2 outputs of the engine', () => {
  it('raw score with five digits, threshold, and passing compared on the exact sum', () => {
    // 12.345675 + 7.654321 = 19.999996: reads "20.00000" but does not reach 20.
    const result = run([stamp('A'), stamp('B')]);
    expect(result.rawScore5).toBe('20.00000');
    expect(result.threshold).toBe('20.00000');
    expect(result.passing).toBe(false);
    expect(run([stamp('A'), stamp('B'), stamp('C')]).passing).toBe(true);
  });

  it('the binary scorer still reports the raw sum for v2', () => {
    const result = run([stamp('A'), stamp('C')], {}, { type: 'binary' });
    expect(result.score).toBe('0.00000');
    expect(result.rawScore5).toBe('15.34568');
    expect(result.passing).toBe(false);
  });

  it('lists counted stamps with their weight and providers held elsewhere as deduplicated, one per provider, in provider order', () => {
    const heldOld = stamp('C', { nullifiers: ['held-1'], issuanceDate: days(-20), expirationDate: days(30) });
    const heldNew = stamp('C', { nullifiers: ['held-2'], issuanceDate: days(-5), expirationDate: days(40) });
    const countedA = stamp('A', { expirationDate: days(10) });
    const olderA = stamp('A', { issuanceDate: days(-30), expirationDate: days(60) });
    const heldB = stamp('B', { nullifiers: ['held-3'] });
    const freeB = stamp('B', { expirationDate: days(50) });
    const expired = stamp('D', { expirationDate: days(-1) });
    const invalid = stamp('E', { valid: 'issuer is not trusted' });
    const hold = { address: OTHER, expiresAt: days(90) };
    const result = run([heldOld, heldNew, countedA, olderA, heldB, freeB, expired, invalid], {
      'held-1': hold,
      'held-2': hold,
      'held-3': hold,
    });
    expect(result.breakdown).toEqual([
      { provider: 'A', score: '12.34568', dedup: false, expirationDate: days(10) },
      // B counts through its free stamp: the held one does not show.
      { provider: 'B', score: '7.65432', dedup: false, expirationDate: days(50) },
      // Only held stamps: the newest one, at zero.
      { provider: 'C', score: '0.00000', dedup: true, expirationDate: days(40) },
    ]);
  });
});
