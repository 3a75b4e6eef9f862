/**
 * What one measured case produced, the figures derived from it (CPU per
 * request, ratios to the ceiling, other processes' share of the machine) and
 * the table `npm run bench` prints.
 */
import type { LoadResult } from './load.js';
import { type MachineUsage, otherCpuMs } from './machine.js';
import type { CaseName } from './options.js';
import type { DatabaseKind, ServerUsage, TargetCheck } from './protocol.js';

/** One round of a paired case (bench/paired-rounds.ts): its figures against the ceiling measured right after it. */
export interface RoundFigures {
  ratioToCeiling: number;
  cpuVsCeiling: number;
  cpuPerRequestUs: number;
  ceilingRps: number;
}

export interface CaseRecord {
  case: CaseName;
  title: string;
  database: DatabaseKind | '-';
  result: LoadResult;
  serverUsage: ServerUsage | null;
  machine: MachineUsage | null;
  after: TargetCheck | null;
  /** The server ran under the CPU profiler: its figures are not comparable. */
  profiled: boolean;
  /** The ceiling measured right after this case (bench/paired-rounds.ts): its ratios are to that one; null: to the run's first ceiling. */
  pairedCeiling: CaseRecord | null;
  /** Every round of a paired case, in the order they ran (the record itself is the median round); empty otherwise. */
  rounds: RoundFigures[];
}

export const titles: Record<CaseName, string> = {
  ceiling: 'ceiling (bare Fastify)',
  'ceiling-large': 'ceiling, 100 KB gzipped (bare Fastify)',
  score: 'GET score (DONE)',
  submit: 'POST submit (20 stamps)',
  bounties: 'GET bounties (10k, 2 filters + order)',
  'bounties-uncached': 'GET bounties, cache off (every request queries)',
  'v2-score': 'v2 score (20 verified stamps)',
  attestation: 'v2 score as a signed EAS offchain attestation (20 stamps)',
  webhooks: 'webhook deliveries to a loopback receiver',
  'webhook-fairness': "a healthy endpoint's delivery delay while another account's endpoints hang (PASS under 5 s)",
  batch: 'batch throughput (20 stamps, 1 and 2 workers; addresses/s, see bench/batch.ts)',
  'batch-upload': 'batch upload: event-loop stall (100,000 addresses, JSON and CSV; see bench/batch-upload.ts)',
};

export interface Derived {
  /** Server CPU (user + system) per completed request, µs. */
  cpuPerRequestUs: number;
  /** Server CPU as a share of one core over the window (1 = one full core). */
  serverCores: number;
  /** Load generator (this process) as cores over the window. */
  loadGeneratorCores: number;
  /** Everything else on the machine as cores over the window. */
  otherCores: number;
  /** req/s of the ceiling it is compared with: the one measured right after it, else the run's first. */
  ceilingRps: number;
  /** req/s over that ceiling's req/s. */
  ratioToCeiling: number;
  /** CPU per request over the ceiling's CPU per request of the same run. */
  cpuVsCeiling: number;
}

export function serverCpuMs(record: CaseRecord): number {
  return record.serverUsage ? record.serverUsage.cpuUserMs + record.serverUsage.cpuSystemMs : Number.NaN;
}

export function derive(record: CaseRecord, runCeiling: CaseRecord | undefined): Derived {
  const ceiling = record.pairedCeiling ?? runCeiling;
  const wallMs = record.serverUsage?.wallMs ?? record.result.durationSeconds * 1000;
  const cpuMs = serverCpuMs(record);
  const cpuPerRequestUs = (cpuMs * 1000) / Math.max(1, record.result.requests);
  const ceilingCpuUs = ceiling ? (serverCpuMs(ceiling) * 1000) / Math.max(1, ceiling.result.requests) : Number.NaN;
  const other = record.machine ? otherCpuMs(record.machine, Number.isFinite(cpuMs) ? cpuMs : 0) : null;
  return {
    cpuPerRequestUs,
    serverCores: cpuMs / wallMs,
    loadGeneratorCores: record.machine ? record.machine.loadGeneratorCpuMs / wallMs : Number.NaN,
    otherCores: other === null ? Number.NaN : other / wallMs,
    ceilingRps: ceiling ? ceiling.result.rps : Number.NaN,
    ratioToCeiling: ceiling ? record.result.rps / ceiling.result.rps : Number.NaN,
    cpuVsCeiling: cpuPerRequestUs / ceilingCpuUs,
  };
}

export function fixed(value: number, digits: number): string {
  return Number.isFinite(value) ? value.toFixed(digits) : 'n/a';
}

export function percent(ratio: number, digits = 1): string {
  return Number.isFinite(ratio) ? `${(ratio * 100).toFixed(digits)}%` : 'n/a';
}

function table(rows: string[][]): string {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  const line = (r: string[]) => r.map((cell, i) => (i <= 1 || i === r.length - 1 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0))).join('  ');
  const [head, ...body] = rows;
  return [line(head ?? []), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)].join('\n');
}

function checksText(record: CaseRecord): string {
  const parts: string[] = [];
  const problems = Object.entries(record.result.bodyProblems);
  if (!record.case.startsWith('ceiling')) {
    const bad = problems.reduce((n, [, c]) => n + c, 0);
    const ok = record.case.startsWith('bounties') ? 'all filtered' : 'all DONE';
    const checked = record.result.bodiesChecked;
    parts.push(bad === 0 ? `${ok} (${checked} checked)` : `bad bodies ${bad} of ${checked} (${problems.map(([k, c]) => `${k}: ${c}`).join(', ')})`);
  }
  if (record.after) {
    if (record.after.queueDepth > 0) parts.push(`queue left ${record.after.queueDepth}`);
    const notDone = Object.entries(record.after.scoreStatus).filter(([status]) => status !== 'DONE');
    if (notDone.length > 0) parts.push(`rows ${notDone.map(([s, n]) => `${s}=${n}`).join(',')}`);
    if (record.after.workerFailures > 0) parts.push(`worker failures ${record.after.workerFailures}`);
  }
  if (record.profiled) parts.push('PROFILED');
  return parts.join('; ');
}

/**
 * The results table. "server CPU" is the server child's CPU over the measured seconds (as a share
 * of one core) and per request; "×ceil CPU" compares that per-request cost with the ceiling's of
 * the same run: it stays put when only the machine is noisy and grows with a regression.
 */
export function resultsTable(records: CaseRecord[]): string {
  const ceiling = records.find((r) => r.case === 'ceiling');
  const rows: string[][] = [
    ['case', 'db', 'load', 'req/s', 'vs ceil', 'p50 ms', 'p99 ms', 'err/non2xx', 'server', 'µs CPU/req', '×ceil CPU', 'loadgen', 'others', 'checks'],
    ...records.map((r) => {
      const d = derive(r, ceiling);
      return [
        r.title,
        r.database,
        r.machine ? fixed(r.machine.loadAtStart, 2) : 'n/a',
        fixed(r.result.rps, 0),
        percent(d.ratioToCeiling),
        fixed(r.result.latencyMs.p50, 2),
        fixed(r.result.latencyMs.p99, 2),
        `${r.result.errors}/${r.result.non2xx}`,
        percent(d.serverCores, 0),
        fixed(d.cpuPerRequestUs, 0),
        fixed(d.cpuVsCeiling, 2),
        percent(d.loadGeneratorCores, 0),
        percent(d.otherCores, 0),
        checksText(r),
      ];
    }),
  ];
  return [
    table(rows),
    'load: 1-minute load average when the case began. server, loadgen, others: CPU over the measured seconds in % of one core',
    '(server = the server child; loadgen = autocannon in this process; others = every other process, PostgreSQL backends included).',
    ...(records.some((r) => r.pairedCeiling)
      ? ['vs ceil and ×ceil CPU of a paired case (median round of its rounds): against the ceiling measured right after that round.']
      : []),
  ].join('\n');
}

/** What counts as broken (exit 1): a case without successes, errors, non-2xx, wrong bodies, worker failures. */
export function brokenCases(records: CaseRecord[]): string[] {
  const problems: string[] = [];
  for (const r of records) {
    const label = `${r.title} on ${r.database}`;
    if (r.result.requests === 0 || (r.result.statusCodes['200'] ?? 0) === 0) problems.push(`${label}: no successful response`);
    if (r.result.errors > 0) problems.push(`${label}: ${r.result.errors} connection errors (${r.result.timeouts} timeouts)`);
    if (r.result.non2xx > 0) problems.push(`${label}: ${r.result.non2xx} non-2xx responses ${JSON.stringify(r.result.statusCodes)}`);
    // A submission may answer PROCESSING on a slow machine; a read or a list must always be right.
    const badBodies = Object.values(r.result.bodyProblems).reduce((n, c) => n + c, 0);
    if (r.case !== 'submit' && badBodies > 0) problems.push(`${label}: ${badBodies} wrong bodies ${JSON.stringify(r.result.bodyProblems)}`);
    if (r.after && r.after.workerFailures > 0) problems.push(`${label}: scoring worker failed ${r.after.workerFailures} times, first: ${r.after.firstWorkerFailure}`);
  }
  return problems;
}
