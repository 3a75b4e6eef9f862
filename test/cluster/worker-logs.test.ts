/**
 * Pairing a worker's `scoring job started` / `settled` lines into runs (the cluster test's
 * overlap check reads them): a run's settled line can be logged after the next run of its job
 * started, since a worker announces the written score before it logs `settled`.
 */
import { describe, expect, it } from 'vitest';
import type { StampgateProcess } from './cluster-processes.js';
import { overlapsOf, runsByJob, runsOf } from './worker-logs.js';

const key = { scorerId: 1, address: '0xaa' };
const started = (at: number) => JSON.stringify({ msg: 'scoring job started', owner: 'w', ...key, at });
const settled = (completingAt: number, at: number) => JSON.stringify({ msg: 'scoring job settled', owner: 'w', ...key, outcome: 'done', completingAt, at });
const worker = (lines: string[]) => ({ label: 'worker-A', lines }) as unknown as StampgateProcess;

describe('the runs of a worker log', () => {
  it('pairs a settled line logged after the next run started with the run it ended', () => {
    // Run 1 completes at 140 and waits for its notice; run 2 is claimed at 150, ends at 300 and logs first.
    const { runs } = runsOf(worker([started(100), started(150), settled(300, 310), settled(140, 320)]), 1000);
    expect(runs.map((run) => [run.start, run.end])).toEqual([
      [100, 140],
      [150, 300],
    ]);
    expect(overlapsOf(runsByJob(runs)).overlaps).toEqual([]);
  });

  it('still finds runs of one job that overlap', () => {
    // Run 2 is claimed at 120, before run 1's completion began at 140.
    const { runs } = runsOf(worker([started(100), started(120), settled(140, 150), settled(300, 310)]), 1000);
    expect(overlapsOf(runsByJob(runs)).overlaps).toHaveLength(1);
  });
});
