/** bench/results/latest.json: the run's settings, machine, set-up, every case's figures and the verdicts. */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { profiles } from './launch.js';
import type { BenchSettings } from './options.js';
import { type CaseRecord, derive } from './report.js';
import type { Verdict } from './verdicts.js';

export interface RunSummary {
  startedAt: Date;
  loadAtStart: number[];
  settings: BenchSettings;
  /** Stampgate settings taken from the environment, by name. */
  passedThrough: string[];
  postgresNote: string | null;
  setup: Record<string, unknown>;
  records: CaseRecord[];
  targets: Verdict[];
  problems: string[];
}

/** Writes the results file; returns its path. */
export function writeResultsFile(resultsDir: string, repoDir: string, run: RunSummary): string {
  let commit: string | null;
  try {
    commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: repoDir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    commit = null;
  }
  const ceiling = run.records.find((r) => r.case === 'ceiling');
  const { settings } = run;
  const document = {
    startedAt: run.startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    commit,
    loadAverage: { start: run.loadAtStart, end: loadavg() },
    machine: { node: process.version, platform: process.platform, arch: process.arch, cpus: cpus().length, cpuModel: cpus()[0]?.model ?? null, memoryBytes: totalmem() },
    settings: { ...settings, postgresUrl: settings.postgresUrl.replace(/\/\/[^@/]*@/, '//…@'), stampgateEnvironment: run.passedThrough },
    postgres: run.postgresNote,
    setup: run.setup,
    cases: run.records.map((r) => ({
      case: r.case,
      title: r.title,
      database: r.database,
      ...derive(r, ceiling),
      ...r.result,
      serverUsage: r.serverUsage,
      machine: r.machine,
      after: r.after,
      profiled: r.profiled,
      rounds: r.rounds,
    })),
    profiles,
    targets: run.targets,
    problems: run.problems,
  };
  mkdirSync(resultsDir, { recursive: true });
  const file = join(resultsDir, 'latest.json');
  writeFileSync(file, `${JSON.stringify(document, null, 2)}\n`);
  return file;
}
