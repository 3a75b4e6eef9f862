import { describe, expect, it } from 'vitest';
import { medianRound, roundsText } from '../../bench/paired-rounds.js';
import type { CaseRecord } from '../../bench/report.js';
import { judge } from '../../bench/verdicts.js';
import { benchWindow } from '../helpers/bench-records.js';

/** A measured window: `rps` requests per second over 10 s, `cpuMs` of server CPU over it. */
const window = (name: CaseRecord['case'], rps: number, cpuMs: number, pairedCeiling: CaseRecord | null = null): CaseRecord =>
  benchWindow(name, rps, { cpuMs, pairedCeiling });

describe('paired rounds (bench)', () => {
  const ceilingAt = (rps: number) => window('ceiling', rps, rps * 10 * 0.025); // 25 µs per request

  it('keeps the median round by req/s ratio, each against the ceiling measured after it', () => {
    const rounds = [
      window('score', 20_000, 8_000, ceilingAt(40_000)), // 50 %
      window('score', 21_000, 8_000, ceilingAt(28_000)), // 75 %
      window('score', 24_000, 8_000, ceilingAt(30_000)), // 80 %
      window('score', 20_000, 8_000, ceilingAt(32_000)), // 62.5 %
      window('score', 30_000, 8_000, ceilingAt(33_000)), // 90.9 %
    ];
    const median = medianRound(rounds, 'ratioToCeiling');
    expect(median.result.rps).toBe(21_000);
    expect(median.rounds.map((r) => Math.round(r.ratioToCeiling * 1000) / 10)).toEqual([50, 75, 80, 62.5, 90.9]);
    expect(roundsText(median, (f) => `${Math.round(f.ratioToCeiling * 100)}%`)).toBe('median of 5 rounds (50%, 75%, 80%, 63%, 91%)');
  });

  it('takes the worse middle round of an even count, for either measure', () => {
    const byRatio = medianRound([window('score', 20_000, 8_000, ceilingAt(40_000)), window('score', 30_000, 8_000, ceilingAt(40_000))], 'ratioToCeiling');
    expect(byRatio.result.rps).toBe(20_000);
    // CPU per request 40 µs and 60 µs against a 25 µs ceiling: the worse is the higher.
    const byCpu = medianRound([window('bounties', 10_000, 4_000, ceilingAt(30_000)), window('bounties', 10_000, 6_000, ceilingAt(30_000))], 'cpuVsCeiling');
    expect(byCpu.serverUsage?.cpuUserMs).toBe(6_000);
    expect(byCpu.rounds.map((r) => r.cpuVsCeiling)).toEqual([1.6, 2.4]);
  });

  it('judges a paired case against its own ceiling, not the run\'s first one', () => {
    const first = ceilingAt(40_000);
    const score = medianRound([window('score', 21_000, 8_000, ceilingAt(28_000))], 'ratioToCeiling');
    const [ratio] = judge([first, score], ['sqlite'], ['ceiling', 'score']);
    expect(ratio?.verdict).toBe('PASS');
    expect(ratio?.measured).toContain('21000 of 28000 req/s');
    const unpaired = { ...score, pairedCeiling: null };
    expect(judge([first, unpaired], ['sqlite'], ['ceiling', 'score'])[0]?.verdict).toBe('FAIL');
  });

  it('compares the cached list with the 100 KB ceiling itself, and with its paired ceiling for the verdict', () => {
    const large = window('ceiling-large', 20_000, 20_000 * 10 * 0.04); // 40 µs per request
    const list = medianRound([window('bounties', 10_000, 6_000, ceilingAt(30_000))], 'cpuVsCeiling'); // 60 µs
    const [verdict] = judge([ceilingAt(40_000), large, list], ['sqlite'], ['ceiling', 'ceiling-large', 'bounties']);
    expect(verdict?.verdict).toBe('FAIL');
    expect(verdict?.measured).toMatch(/^2\.40× \(60 µs per request\);/);
    expect(verdict?.measured).toContain("1.50× the 100 KB gzipped ceiling's 40 µs");
  });
});
