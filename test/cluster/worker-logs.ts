/**
 * Reading the workers' debug logs: each worker's `scoring job started` / `settled` lines paired
 * into runs, jobs still in hand, and log lines at warning level or above.
 */
import type { StampgateProcess } from './cluster-processes.js';

export interface Run {
  owner: string;
  worker: string;
  key: string;
  start: number;
  end: number;
  /** The settled outcome, or null for a run its worker never finished (killed). */
  outcome: string | null;
  /** When the run's lease ran out, if the worker logs it (`leaseExpiresAt` on the started line). */
  leaseExpiresAt: number | null;
}

export interface JobLine {
  msg: string;
  owner: string;
  scorerId: number;
  address: string;
  at: number;
  outcome?: string;
  /** Optional (not logged today): the lease end on `started`, the clock before the completion on `settled`. */
  leaseExpiresAt?: number;
  completingAt?: number;
}

export function jobLines(proc: StampgateProcess): JobLine[] {
  return proc.lines
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as JobLine)
    .filter((line) => line.msg === 'scoring job started' || line.msg === 'scoring job settled');
}

/** Pairs each worker's started and settled lines into runs; unfinished runs end at `endOfUnfinished`. */
export function runsOf(proc: StampgateProcess, endOfUnfinished: number): { runs: Run[]; unfinished: Run[] } {
  const open = new Map<string, Run[]>();
  const runs: Run[] = [];
  for (const line of jobLines(proc)) {
    const key = `${line.scorerId}:${line.address}`;
    if (line.msg === 'scoring job started') {
      const run: Run = { owner: line.owner, worker: proc.label, key, start: line.at, end: Number.NaN, outcome: null, leaseExpiresAt: line.leaseExpiresAt ?? null };
      open.set(key, [...(open.get(key) ?? []), run]);
      runs.push(run);
    } else {
      // A worker may have two runs of a job open in its log: the first's completion committed, and
      // the job was queued and claimed again, while the first still waited for its notice to be
      // heard before logging `settled`. So the two settled lines can come in either order; each
      // belongs to the latest run that had started by its completion (a run whose completion
      // began before the next run's claim; claims that do overlap still pair into overlapping runs).
      const runsOfKey = open.get(key) ?? [];
      const endsAt = line.completingAt ?? line.at;
      let index = -1;
      for (let i = 0; i < runsOfKey.length; i++) if (runsOfKey[i]!.start <= endsAt && (index < 0 || runsOfKey[i]!.start >= runsOfKey[index]!.start)) index = i;
      const run = runsOfKey.splice(index < 0 ? 0 : index, 1)[0];
      if (!run) throw new Error(`${proc.label}: settled line without a started line: ${JSON.stringify(line)}`);
      // A run holds its job until its completion commits, which is logged just after; a clock
      // reading taken before the completion, where logged, is a bound that cannot overstate it.
      run.end = line.completingAt ?? line.at;
      run.outcome = line.outcome ?? '?';
    }
  }
  const unfinished = runs.filter((r) => r.outcome === null);
  for (const run of unfinished) run.end = endOfUnfinished;
  return { runs, unfinished };
}

/** Log lines at `level` or above (pino: 40 warn, 50 error), labelled by process. */
export function problemLines(procs: StampgateProcess[], level: number): string[] {
  return procs.flatMap((proc) =>
    proc.lines
      .filter((line) => line.startsWith('{') && (JSON.parse(line) as { level: number }).level >= level)
      .map((line) => `${proc.label}: ${line.slice(0, 600)}`),
  );
}

export function unfinishedCount(proc: StampgateProcess): number {
  let open = 0;
  for (const line of jobLines(proc)) open += line.msg === 'scoring job started' ? 1 : -1;
  return open;
}

/**
 * A lease runs from the clock reading a worker takes just before its claim transaction; its
 * `scoring job started` line is written after that transaction commits. A takeover must start
 * at least LEASE_MS after the claim, so at least LEASE_MS minus this slack after the line. (Exact
 * instead when the started line carries `leaseExpiresAt`.)
 */
const CLAIM_SLACK_MS = 250;

/** The runs of every worker grouped by job, each group in start order. */
export function runsByJob(all: Run[]): Map<string, Run[]> {
  const byKey = new Map<string, Run[]>();
  for (const run of all) byKey.set(run.key, [...(byKey.get(run.key) ?? []), run]);
  for (const runs of byKey.values()) runs.sort((a, b) => a.start - b.start);
  return byKey;
}

/** Runs of one job that overlap in time, and the closest gap between two runs of one job that do not. */
export function overlapsOf(byKey: Map<string, Run[]>): { overlaps: string[]; closestGap: number } {
  const overlaps: string[] = [];
  let closestGap = Number.POSITIVE_INFINITY;
  for (const runs of byKey.values()) {
    let latest = runs[0] as Run;
    for (const run of runs.slice(1)) {
      if (run.start < latest.end) {
        overlaps.push(`${run.key}: ${latest.worker} ${latest.start}–${latest.end} (${latest.outcome ?? 'killed'}) and ${run.worker} from ${run.start}`);
      } else {
        closestGap = Math.min(closestGap, run.start - latest.end);
      }
      if (run.end > latest.end) latest = run;
    }
  }
  return { overlaps, closestGap };
}

/** For each run a killed worker left unfinished: when another worker took the job over, relative to the lease end. */
export function takeoversOf(lostRuns: Run[], byKey: Map<string, Run[]>, leaseMs: number) {
  return lostRuns.map((lost) => {
    const next = (byKey.get(lost.key) ?? []).find((r) => r.start > lost.start && r.owner !== lost.owner);
    const leaseEnd = lost.leaseExpiresAt ?? lost.start + leaseMs - CLAIM_SLACK_MS;
    return { key: lost.key, afterStartMs: next ? next.start - lost.start : null, afterLeaseEndMs: next ? next.start - leaseEnd : null, by: next?.worker ?? null };
  });
}
