/**
 * What the scoring queue tests (test/scoring/scoring-queue, scoring-workers and scoring-failures
 * .test.ts) share: real development-issuer stamps, a recorder of workers' runs and scoring
 * windows, instrumented workers, row reads, and the per-test set-up with its clean-ups (workers
 * and peers before the database).
 */
import { randomBytes } from 'node:crypto';
import type { EventEmitter } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, expect } from 'vitest';
import type { AppContext } from '../../src/app/container.js';
import { issueCredential } from '../../src/scoring/stamps/dev-issuer.js';
import { scorePassport } from '../../src/scoring/jobs/passport-scoring.js';
import type { ScoringJobRow } from '../../src/scoring/jobs/scoring-jobs.repository.js';
import type { ScoringOutcome } from '../../src/scoring/records/score-outcome.js';
import { type JobSettled, ScoringWorker, type ScoringWorkerOptions } from '../../src/scoring/jobs/scoring-worker.js';
import { stampsRepository } from '../../src/scoring/stamps/stamps.repository.js';
import { createTestApp, type TestApp } from './app.js';
import type { DatabaseKind } from './databases.js';
import { fastEnv, Peer } from './scoring-peer.js';

export const day = 86_400_000;

export function randomAddress(): string {
  return `0x${randomBytes(20).toString('hex')}`;
}

export type StampSpec = string | { provider: string; nullifiers: string[] };

/** Issues development-issuer credentials to `address` and stores them; every one must be stored. */
export async function giveStamps(ctx: AppContext, address: string, specs: StampSpec[]): Promise<void> {
  const privateKey = ctx.devIssuerKey;
  if (!privateKey) throw new Error('the test context has no development issuer');
  const credentials = specs.map((spec) => {
    const { provider, nullifiers } = typeof spec === 'string' ? { provider: spec, nullifiers: undefined } : spec;
    return issueCredential({ privateKey, address, provider, nullifiers, expiresAt: new Date(Date.now() + 30 * day) });
  });
  const report = await ctx.stamps.importCredentials(credentials);
  expect(report.results.filter((r) => r.status !== 'stored')).toEqual([]);
}

/** Exact sum of catalogue weights with five fraction digits, computed here in scaled integers (not with the engine's code). */
export function expectedScore(ctx: AppContext, providers: string[]): string {
  let units = 0n;
  for (const provider of providers) {
    const weight = ctx.catalogue.defaultWeights.get(provider);
    if (weight === undefined) throw new Error(`${provider} is not in the catalogue`);
    const [whole = '0', fraction = ''] = weight.split('.');
    if (fraction.length > 5) throw new Error(`weight ${weight} has more than five fraction digits`);
    units += BigInt(whole) * 100_000n + BigInt(fraction.padEnd(5, '0'));
  }
  const text = units.toString().padStart(6, '0');
  return `${text.slice(0, -5)}.${text.slice(-5)}`;
}

export const keyOf = (scorerId: number, address: string) => `${scorerId}/${address}`;

/** Milliseconds since the epoch with sub-millisecond precision, comparable between threads of one process. */
export const clock = () => performance.timeOrigin + performance.now();

/** When a worker's scoring function ran for a (scorer, address): after its claim, before it recorded anything. */
export interface ScoringWindow {
  worker: string;
  key: string;
  start: number;
  end: number;
}

export interface Run {
  worker: string;
  key: string;
  job: ScoringJobRow;
  /** clock() when `started` was emitted. */
  startedAt: number;
  /** Date.now() when `started` was emitted. */
  startedWall: number;
  /** clock() when `settled` was emitted. */
  settledAt?: number;
  outcome?: JobSettled['outcome'];
}

/**
 * Records every run (started → settled), every scoring window (from workers
 * made by testWorker() or instrumented peers) and every reported failure of
 * the watched workers: ScoringWorker instances of this thread, or a Peer, whose
 * events carry the time they were emitted in the other thread.
 */
export class Recorder {
  readonly runs: Run[] = [];
  readonly windows: ScoringWindow[] = [];
  readonly failures: { worker: string; error: unknown }[] = [];
  readonly unmatched: JobSettled[] = [];

  watch(worker: EventEmitter, name: string): this {
    worker.on('started', (job: ScoringJobRow, at: number = clock(), wall: number = Date.now()) => {
      this.runs.push({ worker: name, key: keyOf(job.scorer_id, job.address), job, startedAt: at, startedWall: wall });
    });
    worker.on('settled', (settled: JobSettled, at: number = clock()) => {
      const key = keyOf(settled.scorerId, settled.address);
      const run = this.runs.find((r) => r.worker === name && r.key === key && r.outcome === undefined);
      if (!run) {
        this.unmatched.push(settled);
        return;
      }
      run.settledAt = at;
      run.outcome = settled.outcome;
    });
    worker.on('failure', (error: unknown) => this.failures.push({ worker: name, error }));
    worker.on('window', (w: { scorerId: number; address: string; start: number; end: number }) => {
      this.windows.push({ worker: name, key: keyOf(w.scorerId, w.address), start: w.start, end: w.end });
    });
    return this;
  }

  runsOf(key: string): Run[] {
    return this.runs.filter((r) => r.key === key);
  }

  outcomes(key?: string): (JobSettled['outcome'] | undefined)[] {
    return (key === undefined ? this.runs : this.runsOf(key)).map((r) => r.outcome);
  }

  allSettled(): boolean {
    return this.runs.every((r) => r.outcome !== undefined);
  }

  /**
   * Every run settled and each key has a run that ended `done`. Wait for this,
   * not only for the database: a peer's events reach this thread a little after
   * its writes are visible.
   */
  doneFor(...keys: string[]): boolean {
    return this.allSettled() && keys.every((key) => this.runsOf(key).some((r) => r.outcome === 'done'));
  }

  /**
   * Scorings of the same (scorer, address) that overlapped in time. Measured
   * around the scoring function itself, not at `started`/`settled`: those are
   * emitted after the claim and after the completion have committed, so a
   * thread that is descheduled between its commit and its `settled` would make
   * a correct hand-over look like an overlap.
   */
  overlaps(): string[] {
    const found: string[] = [];
    for (const key of new Set(this.windows.map((w) => w.key))) {
      const windows = this.windows.filter((w) => w.key === key).sort((a, b) => a.start - b.start);
      for (let i = 1; i < windows.length; i += 1) {
        const before = windows[i - 1] as ScoringWindow;
        const after = windows[i] as ScoringWindow;
        if (after.start < before.end) found.push(`${key}: ${after.worker} scored it while ${before.worker} was scoring it`);
      }
    }
    return found;
  }

  failureMessages(): string[] {
    return this.failures.map((f) => `${f.worker}: ${(f.error as Error)?.message ?? String(f.error)}`);
  }
}

/** Polls `check` until it returns true, or fails the test after `timeoutMs`. */
export async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 5000, intervalMs = 15): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(intervalMs);
  }
}

export function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

export async function scoreRow(ctx: AppContext, scorerId: number, address: string) {
  return ctx.database.db.selectFrom('scores').selectAll().where('scorer_id', '=', scorerId).where('address', '=', address).executeTakeFirst();
}

export async function jobRows(ctx: AppContext, scorerId?: number, address?: string) {
  let query = ctx.database.db.selectFrom('scoring_jobs').selectAll();
  if (scorerId !== undefined) query = query.where('scorer_id', '=', scorerId);
  if (address !== undefined) query = query.where('address', '=', address);
  return query.execute();
}

export async function holdsOf(ctx: AppContext, scorerId: number, nullifier: string) {
  return ctx.database.db
    .selectFrom('nullifier_holds')
    .selectAll()
    .where('scorer_id', '=', scorerId)
    .where('nullifier', '=', nullifier)
    .execute();
}

export async function setWeights(ctx: AppContext, scorerId: number, weights: string): Promise<void> {
  await ctx.database.db.updateTable('scorers').set({ weights }).where('id', '=', scorerId).execute();
}

export type Hook = (scorerId: number, address: string, outcome?: ScoringOutcome) => Promise<void>;

/** The worker options createAppContext derives from the configuration. */
export function configuredOptions(ctx: AppContext): ScoringWorkerOptions {
  const { config } = ctx;
  return {
    concurrency: config.scoringConcurrency,
    leaseMs: config.scoringLeaseMs,
    pollMs: config.scoringPollMs,
    maxAttempts: config.scoringMaxAttempts,
    backoffBaseMs: config.scoringBackoffMs,
  };
}

/**
 * A worker on `ctx`'s queue built like the context's own (same repository,
 * same scoring function, the configured options unless overridden) that also
 * emits `window` around each scoring, and can hold a run "in flight" on
 * purpose: after scoring it waits for `afterScoring` (or, when scoring threw,
 * `afterFailure`) before the worker records the result.
 */
export function testWorker(
  ctx: AppContext,
  hooks: { afterScoring?: Hook; afterFailure?: Hook } = {},
  options: Partial<ScoringWorkerOptions> = {},
): ScoringWorker {
  const deps = { stamps: stampsRepository(ctx.database), issuers: ctx.issuers, catalogue: ctx.catalogue, accounts: ctx.accounts };
  const worker: ScoringWorker = new ScoringWorker(
    ctx.jobs,
    async (scorerId, address, now): Promise<ScoringOutcome> => {
      const start = clock();
      let outcome: ScoringOutcome;
      try {
        outcome = await scorePassport(deps, scorerId, address, now);
      } catch (error) {
        worker.emit('window', { scorerId, address, start, end: clock() });
        await hooks.afterFailure?.(scorerId, address);
        throw error;
      }
      worker.emit('window', { scorerId, address, start, end: clock() });
      await hooks.afterScoring?.(scorerId, address, outcome);
      return outcome;
    },
    { ...configuredOptions(ctx), ...options },
  );
  return worker;
}

/**
 * The per-test set-up of a `describe` block on `kind`: `setUp()` creates the test's app, and
 * everything registered with `openPeer`, `track` or `onCleanup` is closed after the test, most
 * recent first, before the app.
 */
export function scoringQueueHarness(kind: DatabaseKind) {
  let t: TestApp | undefined;
  /** Run after each test, most recent first (workers and peers before the database). */
  let cleanups: (() => Promise<void>)[];

  async function setUp(env: Record<string, string> = {}): Promise<TestApp> {
    t = await createTestApp(kind, { ...fastEnv, ...env });
    return t;
  }

  function current(): TestApp {
    if (!t) throw new Error('setUp() first');
    return t;
  }

  /** A second process on the same database and data directory (see Peer). */
  async function openPeer(options: Parameters<typeof Peer.open>[1] = {}): Promise<Peer> {
    const peer = await Peer.open(current(), options);
    cleanups.push(() => peer.close());
    return peer;
  }

  function track(worker: ScoringWorker): ScoringWorker {
    cleanups.push(() => worker.stop());
    return worker;
  }

  function onCleanup(cleanup: () => Promise<void>): void {
    cleanups.push(cleanup);
  }

  beforeEach(() => {
    t = undefined;
    cleanups = [];
  });

  afterEach(async () => {
    const errors: unknown[] = [];
    for (const cleanup of [...cleanups.reverse(), async () => t?.close()]) {
      await cleanup().catch((error: unknown) => errors.push(error));
    }
    if (errors.length > 0) throw errors[0];
  });

  return { setUp, current, openPeer, track, onCleanup };
}
