import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { judgeAgainstBaseline, readBaseline } from '../../bench/baseline.js';
import type { CaseRecord } from '../../bench/report.js';
import { benchWindow } from '../helpers/bench-records.js';

const measured = (name: CaseRecord['case'], database: 'sqlite' | 'postgres', rps: number, p50Ms: number): CaseRecord => benchWindow(name, rps, { database, p50Ms });

describe('absolute targets against the issue code benched on the same machine (bench --baseline)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bench-baseline-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'latest.json');
  // As the code wrote it on a slow machine (fields of its own, older version of the file).
  writeFileSync(
    file,
    JSON.stringify({
      commit: 'd9ebbc1aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',
      cases: [
        { case: 'ceiling', database: '-', rps: 12_000, latencyMs: { p50: 0.6 }, cpuPerRequestUs: 60 },
        { case: 'submit', database: 'sqlite', rps: 380, latencyMs: { p50: 24 } },
        { case: 'submit', database: 'postgres', rps: 120, latencyMs: { p50: 80 } },
        { case: 'bounties-uncached', database: 'sqlite', rps: 160, latencyMs: { p50: 57 } },
        { case: 'broken', database: 'sqlite', rps: 'n/a' },
      ],
    }),
  );

  it('reads the cases of a results file and refuses a file that is not one', () => {
    const baseline = readBaseline(file);
    expect(baseline.commit).toBe('d9ebbc1aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa');
    expect(baseline.cases.map((c) => `${c.case}/${c.database}`)).toEqual(['ceiling/-', 'submit/sqlite', 'submit/postgres', 'bounties-uncached/sqlite']);
    const other = join(dir, 'other.json');
    writeFileSync(other, '{"targets":[]}');
    expect(() => readBaseline(other)).toThrow(/not a results file/);
  });

  it("requires the issue's improvement factor over the baseline's figure", () => {
    const baseline = readBaseline(file);
    const verdicts = judgeAgainstBaseline(
      [
        // 24 / 9.5 × 5 = 12.63 ms is the SQLite line; 80 / 40.9 × 15 = 29.34 ms the PostgreSQL one.
        measured('submit', 'sqlite', 1_000, 12.5),
        measured('submit', 'postgres', 300, 29.5),
        // ≥ 3 × 160 = 480 req/s, p50 ≤ 57 / 3 = 19 ms.
        measured('bounties-uncached', 'sqlite', 479, 8),
      ],
      baseline,
      ['sqlite', 'postgres'],
      ['ceiling', 'submit', 'bounties-uncached'],
    );
    const byName = Object.fromEntries(verdicts.map((v) => [v.name, v]));
    expect(byName['submission p50 on SQLite ≥ 1.90× better than d9ebbc1 on this machine']).toMatchObject({ verdict: 'PASS', measured: '1.92× (p50 12.50 ms; d9ebbc1: p50 24.00 ms)' });
    expect(byName['submission p50 on PostgreSQL ≥ 2.73× better than d9ebbc1 on this machine']?.verdict).toBe('FAIL');
    expect(byName['uncached list req/s on SQLite ≥ 3.00× better than d9ebbc1 on this machine']).toMatchObject({ verdict: 'FAIL', measured: '2.99× (479 req/s; d9ebbc1: 160 req/s)' });
    expect(byName['uncached list p50 on SQLite ≥ 3.00× better than d9ebbc1 on this machine']?.verdict).toBe('PASS');
    // No PostgreSQL uncached case in the baseline: said, not judged.
    expect(byName['uncached list req/s on PostgreSQL ≥ 3.00× better than d9ebbc1 on this machine']).toMatchObject({ verdict: 'SKIPPED' });
    expect(verdicts).toHaveLength(6);
  });
});
