import type { CaseRecord } from '../../bench/report.js';

export interface WindowFigures {
  database?: CaseRecord['database'];
  /** Server CPU over the 10 s window, ms (null: no usage figures). */
  cpuMs?: number | null;
  p50Ms?: number;
  pairedCeiling?: CaseRecord | null;
}

/** A measured 10-second window of the bench: `rps` requests per second and the figures given. */
export function benchWindow(name: CaseRecord['case'], rps: number, figures: WindowFigures = {}): CaseRecord {
  const requests = rps * 10;
  const p50 = figures.p50Ms ?? 0.3;
  return {
    case: name,
    title: name,
    database: figures.database ?? (name === 'ceiling' ? '-' : 'sqlite'),
    result: {
      requests,
      durationSeconds: 10,
      rps,
      latencyMs: { p50, p90: Math.max(p50, 0.5), p99: Math.max(p50, 1), max: Math.max(p50, 2), mean: p50 },
      autocannon: { rpsAverage: rps, p50: Math.round(p50), p99: Math.max(1, Math.round(p50)) },
      errors: 0,
      timeouts: 0,
      non2xx: 0,
      statusCodes: { '200': requests },
      bodyProblems: {},
      bodiesChecked: 200,
      warmup: { requests: 0, non2xx: 0, errors: 0 },
    },
    serverUsage: figures.cpuMs == null ? null : { cpuUserMs: figures.cpuMs, cpuSystemMs: 0, eventLoopUtilization: 1, wallMs: 10_000 },
    machine: null,
    after: null,
    profiled: false,
    pairedCeiling: figures.pairedCeiling ?? null,
    rounds: [],
  };
}
