/**
 * The benchmark's settings: environment variables (BENCH_*) and command-line
 * options (`npm run bench -- --case score --database sqlite --profile`). An
 * option given on the command line wins over the environment.
 */
import type { DatabaseKind } from './protocol.js';

export const caseNames = ['ceiling', 'ceiling-large', 'score', 'submit', 'bounties', 'bounties-uncached', 'v2-score', 'attestation', 'webhooks', 'webhook-fairness', 'batch', 'batch-upload'] as const;
export type CaseName = (typeof caseNames)[number];
const databaseNames = ['sqlite', 'postgres'] as const;

export interface BenchSettings {
  seconds: number;
  warmupSeconds: number;
  connections: number;
  addresses: number;
  postgresUrl: string;
  databases: DatabaseKind[];
  /** The cases to measure; the ceiling is always among them, since every ratio needs it. */
  cases: CaseName[];
  bounties: number;
  server: 'child' | 'inprocess';
  /** Profile the server child of this case (with `--cpu-prof`) and print its hottest functions. */
  profileCase: CaseName | null;
  /** Functions listed in the printed profile summary. */
  profileTop: number;
  /** Offered load in requests per second (a diagnostic run: no verdicts), or null: flat out. */
  rate: number | null;
  /** Rounds of each case judged as a ratio to the ceiling, each followed by a ceiling window (bench/paired-rounds.ts). */
  rounds: number;
  /** A results file of the code benched on this machine, to judge the absolute targets against too (bench/baseline.ts). */
  baselineFile: string | null;
}

export const usageText = `usage: npm run bench -- [options]

  --case NAME        measure only this case (repeat or comma-separate for several):
                     ${caseNames.join(', ')}
                     (the ceiling is always measured: every ratio is to the ceiling of the same run;
                     ceiling-large, bare Fastify sending the 100 KB page gzipped, only when asked for)
  --database NAME    sqlite or postgres (repeat or comma-separate; default both)
  --profile          run the server child of the chosen case with --cpu-prof and print its
                     top self-time functions over the measured seconds (needs exactly one --case
                     besides the ceiling, or --case ceiling alone); also BENCH_PROFILE=1
  --top N            functions in the printed profile summary (20)
  --rate N           offer N requests per second instead of as many as the server answers: the
                     ceiling and the case then do the same number of requests, none flat out, so
                     their CPU per request compares without either side's idle wake-ups; a
                     diagnostic (BENCH_RATE): the targets are judged flat out, so no verdicts
  --seconds N        measured seconds per case (BENCH_SECONDS, 10)
  --rounds N         rounds of the cases judged as a ratio to the ceiling (single score, cached list),
                     each followed at once by a window of the ceiling; the median round is judged
                     (BENCH_ROUNDS, 3; 1 with --profile)
  --baseline FILE    also judge the absolute targets (submission p50, uncached list) as the issue's
                     improvement factors over FILE: the bench/results/latest.json written on this
                     machine by npm run bench in a checkout of the issue's code (d9ebbc1); the issue's
                     own figures were measured on a machine of another speed (BENCH_BASELINE)
  --help             this text

Environment (all optional; an option wins over its variable):
  BENCH_SECONDS          measured seconds per case (10)
  BENCH_WARMUP_SECONDS   discarded warm-up seconds before each case (2)
  BENCH_CONNECTIONS      concurrent connections (10)
  BENCH_ADDRESSES        size of the address pool, each with 20 stamps (200)
  BENCH_POSTGRES_URL     server for the throw-away database (postgres://postgres@127.0.0.1:5432/postgres)
  BENCH_DATABASES        comma list of sqlite,postgres (both)
  BENCH_CASES            comma list of cases (all)
  BENCH_BOUNTIES         bounties seeded for the bounties cases (10000)
  BENCH_SERVER           child (default: the server in its own process) or inprocess (no CPU figures)
  BENCH_PROFILE          1 = --profile (BENCH_CPU_PROF=1, its former name, too)
  BENCH_RATE             requests per second offered (--rate; unset: flat out)
  BENCH_ROUNDS           rounds of the paired cases (--rounds; 3)
  BENCH_BASELINE         results file of the issue's code on this machine (--baseline)
  BENCH_NODE_FLAGS       extra Node flags of the server child, space-separated (--perf-basic-prof for perf)
Any other Stampgate setting (SUBMIT_WAIT_MS, …) is passed through to the server.`;

export class UsageError extends Error {}

function intFrom(name: string, raw: string | undefined, fallback: number, min: number): number {
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new UsageError(`${name}=${raw} must be a whole number ≥ ${min}`);
  return value;
}

function listFrom<T extends string>(name: string, raw: string[], allowed: readonly T[]): T[] {
  const values = raw.flatMap((r) => r.split(',')).map((v) => v.trim().toLowerCase()).filter(Boolean);
  if (values.length === 0) return [...allowed];
  const bad = values.filter((v) => !allowed.includes(v as T));
  if (bad.length > 0) throw new UsageError(`${name}: unknown ${bad.join(', ')} (allowed: ${allowed.join(', ')})`);
  return [...new Set(values)] as T[];
}

function serverMode(raw: string | undefined): 'child' | 'inprocess' {
  const value = (raw ?? '').trim().toLowerCase();
  if (value === '' || value === 'child') return 'child';
  if (value === 'inprocess') return 'inprocess';
  throw new UsageError(`BENCH_SERVER=${value} must be child or inprocess`);
}

/** Reads the settings; `null` when --help was asked for. Throws UsageError on a bad option. */
export function parseSettings(argv: string[], env: NodeJS.ProcessEnv): BenchSettings | null {
  const caseArgs: string[] = [];
  const databaseArgs: string[] = [];
  let profile = env.BENCH_PROFILE === '1' || env.BENCH_CPU_PROF === '1';
  let top: string | undefined;
  let seconds = env.BENCH_SECONDS;
  let rate = env.BENCH_RATE;
  let rounds = env.BENCH_ROUNDS;
  let baselineFile = env.BENCH_BASELINE?.trim() || null;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const [flag, inline] = arg.startsWith('--') && arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    const value = (): string => {
      const next = inline ?? argv[++i];
      if (next === undefined || next.startsWith('--')) throw new UsageError(`${flag} needs a value`);
      return next;
    };
    if (flag === '--help' || flag === '-h') return null;
    else if (flag === '--case') caseArgs.push(value());
    else if (flag === '--database') databaseArgs.push(value());
    else if (flag === '--profile') profile = true;
    else if (flag === '--top') top = value();
    else if (flag === '--seconds') seconds = value();
    else if (flag === '--rate') rate = value();
    else if (flag === '--rounds') rounds = value();
    else if (flag === '--baseline') baselineFile = value();
    else throw new UsageError(`unknown option ${arg}`);
  }

  const chosen = listFrom('--case', caseArgs.length > 0 ? caseArgs : [env.BENCH_CASES ?? ''], caseNames);
  const cases = caseNames.filter((c) => c === 'ceiling' || chosen.includes(c));
  let profileCase: CaseName | null = null;
  if (profile) {
    const measured = cases.filter((c) => c !== 'ceiling');
    if (measured.length > 1) throw new UsageError(`--profile profiles one case: choose it with --case (now: ${measured.join(', ')})`);
    profileCase = measured[0] ?? 'ceiling';
    if (serverMode(env.BENCH_SERVER) !== 'child') throw new UsageError('--profile needs the server in a child process (BENCH_SERVER=child)');
    // One profiled window per case: profile-summary.ts cuts the profile to it.
    if (intFrom('--rounds', rounds, 1, 1) > 1) throw new UsageError('--profile measures one round: leave --rounds out');
  }
  return {
    seconds: intFrom('seconds', seconds, 10, 1),
    warmupSeconds: intFrom('BENCH_WARMUP_SECONDS', env.BENCH_WARMUP_SECONDS, 2, 1),
    connections: intFrom('BENCH_CONNECTIONS', env.BENCH_CONNECTIONS, 10, 1),
    addresses: intFrom('BENCH_ADDRESSES', env.BENCH_ADDRESSES, 200, 1),
    postgresUrl: env.BENCH_POSTGRES_URL?.trim() || 'postgres://postgres@127.0.0.1:5432/postgres',
    databases: listFrom('--database', databaseArgs.length > 0 ? databaseArgs : [env.BENCH_DATABASES ?? ''], databaseNames),
    cases,
    bounties: intFrom('BENCH_BOUNTIES', env.BENCH_BOUNTIES, 10_000, 1),
    server: serverMode(env.BENCH_SERVER),
    profileCase,
    profileTop: intFrom('--top', top, 20, 1),
    rate: rate === undefined || rate.trim() === '' ? null : intFrom('--rate', rate, 0, 1),
    rounds: profile ? 1 : intFrom('--rounds', rounds, 3, 1),
    baselineFile,
  };
}
