/**
 * The absolute performance targets judged against the reference code measured on this machine
 * (`npm run bench -- --baseline FILE`). The issue's milliseconds and req/s were measured on its
 * author's machine; the same code runs 2-3× slower or faster on other machines of this kind
 * (docs/decisions.md, "Absolute targets also judged against the issue's code on the same
 * machine"). FILE is the `bench/results/latest.json` that `npm run bench` of a checkout of the
 * issue's code (`d9ebbc1`) wrote on this machine; each target's improvement factor over the
 * issue's figure is then required over that file's figure.
 */
import { readFileSync } from 'node:fs';
import type { CaseName } from './options.js';
import type { DatabaseKind } from './protocol.js';
import { type CaseRecord, fixed } from './report.js';
import { issue17, type Verdict } from './verdicts.js';

/** One case of a baseline results file: the fields every version of the bench has written. */
export interface BaselineCase {
  case: string;
  database: string;
  rps: number;
  latencyMs: { p50: number };
}

export interface Baseline {
  file: string;
  commit: string | null;
  cases: BaselineCase[];
}

export function readBaseline(file: string): Baseline {
  const document = JSON.parse(readFileSync(file, 'utf8')) as { commit?: unknown; cases?: unknown };
  if (!Array.isArray(document.cases)) throw new Error(`${file} is not a results file of npm run bench (no "cases")`);
  const cases = document.cases.filter(
    (c): c is BaselineCase =>
      typeof c === 'object' && c !== null && typeof c.case === 'string' && typeof c.database === 'string' && Number.isFinite(c.rps) && Number.isFinite(c.latencyMs?.p50),
  );
  return { file, commit: typeof document.commit === 'string' ? document.commit : null, cases };
}

/** `--baseline FILE` read before the run: a file that cannot be read ends the bench at once (exit 2), as a bad option does. */
export function readBaselineOrExit(file: string | null): Baseline | null {
  if (file === null) return null;
  try {
    return readBaseline(file);
  } catch (error) {
    console.error(`--baseline ${file}: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(2);
  }
}

const databaseLabel: Record<DatabaseKind, string> = { sqlite: 'SQLite', postgres: 'PostgreSQL' };

/** The targets that are absolute figures in the issue, as improvement factors over the issue's own figure. */
function factorsOf(database: DatabaseKind) {
  return [
    {
      case: 'submit' as const,
      what: 'submission p50',
      // The issue's 9.5 ms → 5 ms (SQLite) and 40.9 ms → 15 ms (PostgreSQL).
      factor: issue17.submitToday[database].p50Ms / issue17.submitP50Ms[database],
      gain: (now: BaselineCase, before: BaselineCase) => before.latencyMs.p50 / now.latencyMs.p50,
      figure: (c: BaselineCase) => `p50 ${fixed(c.latencyMs.p50, 2)} ms`,
    },
    {
      case: 'bounties-uncached' as const,
      what: 'uncached list req/s',
      factor: issue17.bountiesUncachedFactor,
      gain: (now: BaselineCase, before: BaselineCase) => now.rps / before.rps,
      figure: (c: BaselineCase) => `${fixed(c.rps, 0)} req/s`,
    },
    {
      case: 'bounties-uncached' as const,
      what: 'uncached list p50',
      // The bench reads "≥ 3× today" of the p50 too (the issue's 11.6 ms ÷ 3).
      factor: issue17.bountiesUncachedFactor,
      gain: (now: BaselineCase, before: BaselineCase) => before.latencyMs.p50 / now.latencyMs.p50,
      figure: (c: BaselineCase) => `p50 ${fixed(c.latencyMs.p50, 2)} ms`,
    },
  ];
}

export function judgeAgainstBaseline(records: CaseRecord[], baseline: Baseline, databases: DatabaseKind[], cases: CaseName[]): Verdict[] {
  const verdicts: Verdict[] = [];
  const name = baseline.commit ? baseline.commit.slice(0, 7) : baseline.file;
  for (const database of databases) {
    for (const target of factorsOf(database)) {
      if (!cases.includes(target.case)) continue;
      const title = `${target.what} on ${databaseLabel[database]} ≥ ${fixed(target.factor, 2)}× better than ${name} on this machine`;
      const record = records.find((r) => r.case === target.case && r.database === database);
      const before = baseline.cases.find((c) => c.case === target.case && c.database === database);
      if (!record || !before) {
        verdicts.push({ name: title, verdict: 'SKIPPED', measured: record ? `no ${target.case} case on ${database} in ${baseline.file}` : 'case not run', caveat: null });
        continue;
      }
      const now: BaselineCase = { case: record.case, database, rps: record.result.rps, latencyMs: { p50: record.result.latencyMs.p50 } };
      const gain = target.gain(now, before);
      verdicts.push({
        name: title,
        verdict: gain >= target.factor ? 'PASS' : 'FAIL',
        measured: `${fixed(gain, 2)}× (${target.figure(now)}; ${name}: ${target.figure(before)})`,
        caveat: null,
      });
    }
  }
  return verdicts;
}
