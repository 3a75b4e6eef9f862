/**
 * The durable scoring queue and its workers, end to end on a real database:
 * submissions, leases and crash recovery, two workers (two "processes") on one
 * database, coalescing, retries, deduplication races and graceful stop.
 *
 * A second AppContext, in a worker thread with its own connection(s) to the same
 * database and the same data directory, stands in for a second process (see
 * Peer). Stamps are real credentials of the development issuer.
 */
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { createRequire } from 'node:module';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import type { Database } from '../../src/db/connection.js';
import { issueCredential } from '../../src/scoring/stamps/dev-issuer.js';
import { scorePassport } from '../../src/scoring/jobs/passport-scoring.js';
import type { ScoringJobRow, ScoringOutcome } from '../../src/scoring/jobs/scoring-jobs.repository.js';
import { type JobSettled, ScoringWorker, type ScoringWorkerOptions } from '../../src/scoring/jobs/scoring-worker.js';
import type { ScoreRecord } from '../../src/scoring/scores/scores.service.js';
import { stampsRepository } from '../../src/scoring/stamps/stamps.repository.js';
import { createTestApp, seedAccount, type TestApp } from '../helpers/app.js';
import { databaseKinds } from '../helpers/databases.js';

const day = 86_400_000;

/** Settings shared by every context of these tests: answer at once, poll often. */
const fastEnv = { SUBMIT_WAIT_MS: '0', SCORING_POLL_MS: '25' };

// ---------------------------------------------------------------------------
// Helpers (kept in this file on purpose: other test files are edited in parallel)

function randomAddress(): string {
  return `0x${randomBytes(20).toString('hex')}`;
}

type StampSpec = string | { provider: string; nullifiers: string[] };

/** Issues development-issuer credentials to `address` and stores them; every one must be stored. */
async function giveStamps(ctx: AppContext, address: string, specs: StampSpec[]): Promise<void> {
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
function expectedScore(ctx: AppContext, providers: string[]): string {
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

const keyOf = (scorerId: number, address: string) => `${scorerId}/${address}`;

/** Milliseconds since the epoch with sub-millisecond precision, comparable between threads of one process. */
const clock = () => performance.timeOrigin + performance.now();

/** When a worker's scoring function ran for a (scorer, address): after its claim, before it recorded anything. */
interface ScoringWindow {
  worker: string;
  key: string;
  start: number;
  end: number;
}

interface Run {
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
class Recorder {
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

/**
 * The second process of the multi-worker tests, in a worker thread: its own
 * event loop, its own AppContext and connection(s) to the same database and
 * data directory. A thread, not a second context in this thread, because a
 * better-sqlite3 connection waits for a lock synchronously (busy_timeout): in
 * one thread a waiting connection freezes the very event loop the lock holder
 * needs to finish, which two real processes never do.
 *
 * Loading the application into a thread takes seconds, so one thread serves
 * the whole file; each test opens (and closes) its own context in it. The
 * peer's worker is its context's own, or, with `instrument`/`hold`, one built
 * the same way that reports scoring windows and (with `hold`) waits for
 * release() after scoring while holding is on, having reported `scored`.
 */
const peerSource = String.raw`
const { parentPort, workerData } = require('node:worker_threads');
const { performance } = require('node:perf_hooks');
const { pathToFileURL } = require('node:url');
const { createRequire } = require('node:module');
const clock = () => performance.timeOrigin + performance.now();
const post = (message) => parentPort.postMessage(message);
const errorText = (error) => String((error && (error.stack || error.message)) || error);
(async () => {
  const { register } = await import(pathToFileURL(workerData.tsxApi).href);
  register();
  const load = (path) => import(pathToFileURL(workerData.root + path).href);
  const [{ createAppContext }, { loadConfig }, { openDatabase }, { scorePassport }, { stampsRepository }, { ScoringWorker }] =
    await Promise.all([
      load('/src/app-context.ts'),
      load('/src/config/index.ts'),
      load('/src/db/connection.ts'),
      load('/src/scoring/jobs/passport-scoring.ts'),
      load('/src/scoring/stamps/stamps.repository.ts'),
      load('/src/scoring/jobs/scoring-worker.ts'),
    ]);
  const req = createRequire(workerData.root + '/package.json');
  let session = null;

  async function closeSession(state) {
    release(state);
    await state.worker.stop();
    await state.lockReleased;
    await state.ctx.close();
  }

  async function open(options) {
    // A test that timed out may have left its session open: end it first.
    if (session) {
      const stale = session;
      session = null;
      await closeSession(stale).catch(() => {});
    }
    const database = openDatabase(options.env.DATABASE_URL, options.poolSize ? { poolSize: options.poolSize } : {});
    const ctx = await createAppContext(loadConfig(options.env), database);
    const state = { ctx, worker: ctx.worker, holding: Boolean(options.hold), waiting: [], lockReleased: Promise.resolve() };
    if (options.hold || options.instrument) {
      // Built like the context's own worker, plus scoring windows and holding (see testWorker()).
      const deps = { stamps: stampsRepository(ctx.database.db), issuers: ctx.issuers, catalogue: ctx.catalogue, accounts: ctx.accounts };
      const { config } = ctx;
      state.worker = new ScoringWorker(
        ctx.jobs,
        async (scorerId, address, now) => {
          const start = clock();
          let outcome;
          try {
            outcome = await scorePassport(deps, scorerId, address, now);
          } finally {
            post({ kind: 'window', scorerId, address, start, end: clock() });
          }
          if (state.holding) {
            post({ kind: 'scored', scorerId, address });
            await new Promise((resolve) => state.waiting.push(resolve));
          }
          return outcome;
        },
        {
          concurrency: config.scoringConcurrency,
          leaseMs: config.scoringLeaseMs,
          pollMs: config.scoringPollMs,
          maxAttempts: config.scoringMaxAttempts,
          backoffBaseMs: config.scoringBackoffMs,
          ...options.workerOptions,
        },
      );
    }
    state.worker.on('started', (job) => post({ kind: 'started', job, at: clock(), wall: Date.now() }));
    state.worker.on('settled', (settled) => post({ kind: 'settled', settled, at: clock() }));
    state.worker.on('failure', (error) => post({ kind: 'failure', message: String((error && error.message) || error) }));
    session = state;
    return state.worker.owner;
  }

  function release(state) {
    state.holding = false;
    for (const resolve of state.waiting.splice(0)) resolve();
  }

  // Another process writing: holds the database's write lock for ms, then lets go.
  async function lock(state, ms) {
    await state.lockReleased;
    const url = state.ctx.config.databaseUrl;
    let unlock;
    if (url.startsWith('sqlite:')) {
      const Sqlite = req('better-sqlite3');
      const connection = new Sqlite(url.slice('sqlite:'.length));
      connection.pragma('busy_timeout = 5000');
      connection.exec('begin immediate');
      unlock = async () => {
        connection.exec('commit');
        connection.close();
      };
    } else {
      const pg = req('pg');
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      await client.query('begin');
      await client.query('lock table scoring_jobs, scores, nullifier_holds in exclusive mode');
      unlock = async () => {
        await client.query('commit');
        await client.end();
      };
    }
    state.lockReleased = new Promise((resolve) => setTimeout(() => unlock().then(resolve, resolve), ms));
  }

  parentPort.on('message', async (message) => {
    try {
      let result = null;
      if (message.cmd === 'open') result = await open(message.options);
      else if (!session) throw new Error('no open session');
      else if (message.cmd === 'submit') result = await session.ctx.scores.submit(message.scorerId, message.address);
      else if (message.cmd === 'start') session.worker.start();
      else if (message.cmd === 'release') release(session);
      else if (message.cmd === 'lock') await lock(session, message.ms);
      else if (message.cmd === 'unlocked') await session.lockReleased;
      else if (message.cmd === 'close') {
        const state = session;
        session = null;
        await closeSession(state);
      }
      post({ kind: 'reply', id: message.id, result });
    } catch (error) {
      post({ kind: 'reply', id: message.id, error: errorText(error) });
    }
  });
  post({ kind: 'ready' });
})().catch((error) => post({ kind: 'fatal', error: errorText(error) }));
`;

type PeerMessage =
  | { kind: 'ready' }
  | { kind: 'fatal'; error: string }
  | { kind: 'reply'; id: number; result?: unknown; error?: string }
  | { kind: 'started'; job: ScoringJobRow; at: number; wall: number }
  | { kind: 'settled'; settled: JobSettled; at: number }
  | { kind: 'failure'; message: string }
  | { kind: 'scored'; scorerId: number; address: string }
  | { kind: 'window'; scorerId: number; address: string; start: number; end: number };

/** The worker thread that hosts peers, one at a time. */
class PeerThread {
  readonly #thread: Worker;
  readonly #replies = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  #nextId = 0;
  /** The peer whose events the thread's messages are, if any. */
  current: Peer | null = null;

  private constructor(thread: Worker) {
    this.#thread = thread;
  }

  static async start(): Promise<PeerThread> {
    const thread = new Worker(peerSource, {
      eval: true,
      workerData: {
        // The ESM build of tsx's API (require.resolve gives the CommonJS one, which cannot register in a thread).
        tsxApi: createRequire(import.meta.url).resolve('tsx/esm/api').replace(/\.cjs$/, '.mjs'),
        root: fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, ''),
      },
    });
    peerWorkerThread = thread;
    const peerThread = new PeerThread(thread);
    await new Promise<void>((resolve, reject) => {
      thread.on('message', (message: PeerMessage) => {
        if (message.kind === 'ready') resolve();
        else if (message.kind === 'fatal') reject(new Error(`the peer thread failed to start: ${message.error}`));
        else peerThread.#dispatch(message);
      });
      thread.on('error', reject);
    });
    return peerThread;
  }

  #dispatch(message: PeerMessage): void {
    const peer = this.current;
    switch (message.kind) {
      case 'reply': {
        const waiter = this.#replies.get(message.id);
        this.#replies.delete(message.id);
        if (message.error !== undefined) waiter?.reject(new Error(message.error));
        else waiter?.resolve(message.result);
        break;
      }
      case 'started':
        peer?.emit('started', message.job, message.at, message.wall);
        break;
      case 'settled':
        peer?.emit('settled', message.settled, message.at);
        break;
      case 'failure':
        peer?.emit('failure', new Error(message.message));
        break;
      case 'scored':
        peer?.emit('scored', { scorerId: message.scorerId, address: message.address });
        break;
      case 'window':
        peer?.emit('window', { scorerId: message.scorerId, address: message.address, start: message.start, end: message.end });
        break;
    }
  }

  call(cmd: string, args: Record<string, unknown> = {}): Promise<unknown> {
    const id = (this.#nextId += 1);
    return new Promise((resolve, reject) => {
      this.#replies.set(id, { resolve, reject });
      this.#thread.postMessage({ id, cmd, ...args });
    });
  }

}

let peerThread: Promise<PeerThread> | null = null;
/** Set as soon as the thread exists, so that it is ended even if it never finished starting. */
let peerWorkerThread: Worker | null = null;
const sharedPeerThread = () => (peerThread ??= PeerThread.start());

/** A second process on the test's database: emits `started`, `settled`, `failure` like a worker (and `window`, `scored` when instrumented, holding). */
class Peer extends EventEmitter {
  owner = '';
  #closed = false;

  private constructor(private readonly thread: PeerThread) {
    super();
  }

  static async open(
    t: TestApp,
    options: {
      env?: Record<string, string>;
      /** Score with a worker built like the context's own that also reports scoring windows. */
      instrument?: boolean;
      /** Like instrument, and each scoring then waits for release() (while holding is on). */
      hold?: boolean;
      workerOptions?: Partial<ScoringWorkerOptions>;
    } = {},
  ): Promise<Peer> {
    const thread = await sharedPeerThread();
    // One peer at a time: the thread ends a session a timed-out test left open when the next one opens.
    const peer = new Peer(thread);
    thread.current = peer;
    peer.owner = (await thread.call('open', {
      options: {
        env: {
          STAMPGATE_ENV: 'development',
          API_KEY_CACHE_TTL_MS: '0',
          ...fastEnv,
          ...options.env,
          DATABASE_URL: t.test.url,
          DATA_DIR: t.ctx.config.dataDir,
        },
        poolSize: t.test.kind === 'postgres' ? 5 : 0,
        hold: options.hold ?? false,
        instrument: options.instrument ?? false,
        workerOptions: options.workerOptions ?? {},
      },
    })) as string;
    return peer;
  }

  submit(scorerId: number, address: string): Promise<ScoreRecord> {
    return this.thread.call('submit', { scorerId, address }) as Promise<ScoreRecord>;
  }

  async start(): Promise<void> {
    await this.thread.call('start');
  }

  /** Lets held runs go on, and stops holding. */
  async release(): Promise<void> {
    await this.thread.call('release');
  }

  /** Takes the database's write lock in the peer (after any earlier one is let go), holds it for `ms`; resolves once held. */
  async lockDatabase(ms: number): Promise<void> {
    await this.thread.call('lock', { ms });
  }

  /** Resolves once the peer's lock is let go. */
  async unlocked(): Promise<void> {
    await this.thread.call('unlocked');
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    try {
      await Promise.race([
        this.thread.call('close'),
        sleep(10_000).then(() => {
          throw new Error('the peer did not close within 10 s');
        }),
      ]);
    } finally {
      if (this.thread.current === this) this.thread.current = null;
    }
  }
}

afterAll(async () => {
  await peerWorkerThread?.terminate();
});

/** Polls `check` until it returns true, or fails the test after `timeoutMs`. */
async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 5000, intervalMs = 15): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(intervalMs);
  }
}

function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

async function scoreRow(ctx: AppContext, scorerId: number, address: string) {
  return ctx.database.db.selectFrom('scores').selectAll().where('scorer_id', '=', scorerId).where('address', '=', address).executeTakeFirst();
}

async function jobRows(ctx: AppContext, scorerId?: number, address?: string) {
  let query = ctx.database.db.selectFrom('scoring_jobs').selectAll();
  if (scorerId !== undefined) query = query.where('scorer_id', '=', scorerId);
  if (address !== undefined) query = query.where('address', '=', address);
  return query.execute();
}

async function holdsOf(ctx: AppContext, scorerId: number, nullifier: string) {
  return ctx.database.db
    .selectFrom('nullifier_holds')
    .selectAll()
    .where('scorer_id', '=', scorerId)
    .where('nullifier', '=', nullifier)
    .execute();
}

async function setWeights(ctx: AppContext, scorerId: number, weights: string): Promise<void> {
  await ctx.database.db.updateTable('scorers').set({ weights }).where('id', '=', scorerId).execute();
}

type Hook = (scorerId: number, address: string, outcome?: ScoringOutcome) => Promise<void>;

/** The worker options createAppContext derives from the configuration. */
function configuredOptions(ctx: AppContext): ScoringWorkerOptions {
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
function testWorker(
  ctx: AppContext,
  hooks: { afterScoring?: Hook; afterFailure?: Hook } = {},
  options: Partial<ScoringWorkerOptions> = {},
): ScoringWorker {
  const deps = { stamps: stampsRepository(ctx.database.db), issuers: ctx.issuers, catalogue: ctx.catalogue, accounts: ctx.accounts };
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

// ---------------------------------------------------------------------------

// Loading the application into the peer thread takes a few seconds (far more on a machine busy
// with other test runs): done once, before the tests.
beforeAll(async () => {
  await sharedPeerThread();
}, 120_000);

describe.each(databaseKinds)('scoring queue and workers on %s', (kind) => {
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

  describe('durable queue', () => {
    it('keeps a submission as a PROCESSING score and a queued job until a worker, even in another process, finishes it', async () => {
      const { ctx } = await setUp();
      const { scorer } = await seedAccount(ctx);
      const address = randomAddress();
      await giveStamps(ctx, address, ['Google', 'Discord', 'Linkedin']);

      const record = await ctx.scores.submit(scorer.id, address);
      expect(record).toMatchObject({ address, status: 'PROCESSING', score: null, evidence: null, error: null });

      // Nothing runs it: no worker was started in this process.
      await sleep(300);
      expect(await scoreRow(ctx, scorer.id, address)).toMatchObject({ status: 'PROCESSING', score: null, error: null });
      const [job, ...others] = await jobRows(ctx);
      expect(others).toEqual([]);
      expect(job).toMatchObject({ scorer_id: scorer.id, address, state: 'queued', generation: 1, attempts: 0, lease_owner: null });

      // A worker of a freshly started process picks it up from the database.
      const second = await openPeer({ env: { SUBMIT_WAIT_MS: '3000' } });
      const recorder = new Recorder().watch(second, 'second');
      await second.start();
      await until('the score to be DONE', async () => (await scoreRow(ctx, scorer.id, address))?.status === 'DONE');

      expect(await scoreRow(ctx, scorer.id, address)).toMatchObject({
        status: 'DONE',
        score: expectedScore(ctx, ['Google', 'Discord', 'Linkedin']),
        evidence: null,
        error: null,
      });
      expect(await jobRows(ctx)).toEqual([]);
      await until('the run to be reported', () => recorder.doneFor(keyOf(scorer.id, address)));
      expect(recorder.outcomes()).toEqual(['done']);

      // Re-submission re-scores from the stamps stored now, and a submission waits for its score.
      await giveStamps(ctx, address, ['Ens']);
      const again = await second.submit(scorer.id, address);
      expect(again).toMatchObject({ status: 'DONE', score: expectedScore(ctx, ['Google', 'Discord', 'Linkedin', 'Ens']), error: null });
      expect(await jobRows(ctx)).toEqual([]);
      expect(recorder.failureMessages()).toEqual([]);
    });

    it('waits for a short write lock held by another process instead of failing queue operations', async () => {
      const { ctx } = await setUp();
      const { scorer } = await seedAccount(ctx);
      const peer = await openPeer();
      const [a, b, c] = [randomAddress(), randomAddress(), randomAddress()];
      const now = Date.now();
      await ctx.jobs.enqueue(scorer.id, a, now);
      await ctx.jobs.enqueue(scorer.id, b, now);
      const claimedA = await ctx.jobs.claimNext('owner', now, 30_000);
      expect(claimedA?.address).toBe(a);
      if (!claimedA) throw new Error('unreachable');

      // Each operation starts while the other process holds the lock for 300 ms; each must simply wait.
      // (On SQLite a transaction that reads first and then writes cannot wait: SQLite answers
      // SQLITE_BUSY at once instead of calling the busy handler, unless it began IMMEDIATE.)
      const underLock = async <T>(name: string, operation: () => Promise<T>) => {
        await peer.lockDatabase(300);
        try {
          return { name, value: await operation() };
        } catch (error) {
          return { name, error: (error as Error).message };
        } finally {
          await peer.unlocked();
        }
      };
      const results = [
        await underLock('enqueue', () => ctx.jobs.enqueue(scorer.id, c, now)),
        await underLock('claimNext', async () => (await ctx.jobs.claimNext('owner', now, 30_000))?.address),
        await underLock('complete', () => ctx.jobs.complete(claimedA, 'owner', now, { score: '1.00000', evidence: null, expirationDate: null, stampScores: '{}', claims: [] })),
      ];
      const claimedB = await ctx.jobs.claimNext('owner', now, 30_000);
      if (claimedB) results.push(await underLock('fail', async () => ctx.jobs.fail(claimedB, 'owner', now, 'Failed.', null)));
      expect(results).toEqual([
        { name: 'enqueue', value: undefined },
        { name: 'claimNext', value: b },
        { name: 'complete', value: 'done' },
        { name: 'fail', value: 'error' },
      ]);
    });
  });

  describe('crash recovery', () => {
    it('leaves a dead worker’s job alone until its lease expires, then another worker takes and finishes it', async () => {
      const { ctx } = await setUp();
      const { scorer } = await seedAccount(ctx);
      const address = randomAddress();
      await giveStamps(ctx, address, ['Google', 'Linkedin']);
      await ctx.scores.submit(scorer.id, address);

      // What a SIGKILLed process leaves behind: a claimed job that is never completed.
      const leaseMs = 1200;
      const claimedAt = Date.now();
      const dead = await ctx.jobs.claimNext('dead-owner', claimedAt, leaseMs);
      expect(dead).toMatchObject({ address, state: 'running', lease_owner: 'dead-owner', lease_expires_at: claimedAt + leaseMs, attempts: 1 });
      if (!dead) throw new Error('unreachable');

      // The new owner's own lease is long: a run slowed down by a loaded machine must not outlive it.
      const second = await openPeer({ env: { SCORING_LEASE_MS: '10000' } });
      const recorder = new Recorder().watch(second, 'second');
      await second.start();

      // The second worker polls every 25 ms, but the lease is not over yet.
      await sleep(claimedAt + leaseMs - 300 - Date.now());
      const [jobBeforeExpiry, scoreBeforeExpiry, lookedAt] = [await jobRows(ctx), await scoreRow(ctx, scorer.id, address), Date.now()];
      if (lookedAt < claimedAt + leaseMs) {
        expect(jobBeforeExpiry).toMatchObject([{ id: dead.id, state: 'running', lease_owner: 'dead-owner' }]);
        expect(scoreBeforeExpiry).toMatchObject({ status: 'PROCESSING' });
      }

      await until('the score to be DONE', async () => (await scoreRow(ctx, scorer.id, address))?.status === 'DONE', 5000);
      await until('the run to be reported', () => recorder.doneFor(keyOf(scorer.id, address)));
      expect(recorder.runs).toHaveLength(1);
      const [takeover] = recorder.runs as [Run];
      // The same job, under a new lease of the new owner, as a second attempt.
      expect(takeover.job).toMatchObject({ id: dead.id, lease_owner: second.owner, attempts: 2 });
      expect(takeover.job.lease_expires_at).toBeGreaterThan(claimedAt + leaseMs);
      // Taken only once the lease had run out.
      expect(takeover.startedWall).toBeGreaterThanOrEqual(claimedAt + leaseMs);
      expect(takeover.outcome).toBe('done');
      const expected = expectedScore(ctx, ['Google', 'Linkedin']);
      expect(await scoreRow(ctx, scorer.id, address)).toMatchObject({ status: 'DONE', score: expected, error: null });
      expect(await jobRows(ctx)).toEqual([]);

      // The dead owner comes back (a paused process, not a killed one) and reports a stale result.
      const stale = await ctx.jobs.complete(dead, 'dead-owner', Date.now(), {
        score: '999.00000',
        evidence: null,
        expirationDate: null,
        stampScores: '{}',
        claims: [{ nullifier: 'stale-claim', expiresAt: Date.now() + day }],
      });
      expect(stale).toBe('lost');
      expect(await ctx.jobs.fail(dead, 'dead-owner', Date.now(), 'stale failure', null)).toBe('lost');
      expect(await scoreRow(ctx, scorer.id, address)).toMatchObject({ status: 'DONE', score: expected, error: null });
      expect(await holdsOf(ctx, scorer.id, 'stale-claim')).toEqual([]);
      expect(recorder.failureMessages()).toEqual([]);
    });

    it('answers lost to a stale owner while the new owner still holds the job, and lets the new owner finish', async () => {
      const { ctx } = await setUp();
      const { scorer } = await seedAccount(ctx);
      const address = randomAddress();
      const now = Date.now();
      await ctx.jobs.enqueue(scorer.id, address, now);

      const first = await ctx.jobs.claimNext('first-owner', now, 100);
      expect(first?.lease_owner).toBe('first-owner');
      // Before the lease ends nobody else gets it; after, the next claimer gets the same job.
      expect(await ctx.jobs.claimNext('second-owner', now + 99, 30_000)).toBeUndefined();
      const second = await ctx.jobs.claimNext('second-owner', now + 101, 30_000);
      expect(second).toMatchObject({ id: first?.id, lease_owner: 'second-owner', attempts: 2 });
      if (!first || !second) throw new Error('unreachable');

      const staleOutcome = { score: '5.00000', evidence: null, expirationDate: null, stampScores: '{}', claims: [{ nullifier: 'n-stale', expiresAt: now + day }] };
      expect(await ctx.jobs.complete(first, 'first-owner', now + 200, staleOutcome)).toBe('lost');
      expect(await scoreRow(ctx, scorer.id, address)).toMatchObject({ status: 'PROCESSING', score: null });
      expect(await holdsOf(ctx, scorer.id, 'n-stale')).toEqual([]);
      expect(await jobRows(ctx)).toMatchObject([{ id: first.id, state: 'running', lease_owner: 'second-owner' }]);

      const freshOutcome = { score: '7.00000', evidence: null, expirationDate: null, stampScores: '{}', claims: [{ nullifier: 'n-fresh', expiresAt: now + day }] };
      expect(await ctx.jobs.complete(second, 'second-owner', now + 300, freshOutcome)).toBe('done');
      expect(await scoreRow(ctx, scorer.id, address)).toMatchObject({ status: 'DONE', score: '7.00000', last_score_timestamp: now + 300 });
      expect(await holdsOf(ctx, scorer.id, 'n-fresh')).toMatchObject([{ address }]);
      expect(await jobRows(ctx)).toEqual([]);
    });
  });

  describe('two workers on one database', () => {
    // 30 s rather than the usual 20 s: it takes 3 to 6 s, more on a machine busy with other test runs.
    it('never score the same (scorer, address) twice at once, and every submission ends DONE with its score', { timeout: 30_000 }, async () => {
      const { ctx } = await setUp({ SCORING_CONCURRENCY: '3' });
      const { scorer } = await seedAccount(ctx);
      const providers = ['Google', 'Discord', 'Linkedin', 'Ens', 'Lens', 'GnosisSafe', 'NFT'];
      const addresses = Array.from({ length: 20 }, () => randomAddress());
      const stampsOf = (i: number) => providers.slice(0, 1 + (i % providers.length));
      for (const [i, address] of addresses.entries()) await giveStamps(ctx, address, stampsOf(i));

      // One worker in each process, each three jobs at a time, both timing their scorings.
      const peer = await openPeer({ env: { SCORING_CONCURRENCY: '3' }, instrument: true });
      const local = track(testWorker(ctx));
      expect(ctx.config.scoringConcurrency).toBe(3);
      const recorder = new Recorder().watch(local, 'first').watch(peer, 'second');
      local.start();
      await peer.start();

      // 2 to 5 submissions per address (70 in all), through both processes, spread over ~150 ms so
      // that some arrive together and some while the address is being scored.
      const submissions: Promise<ScoreRecord>[] = [];
      for (const [i, address] of addresses.entries()) {
        for (let n = 0; n < 2 + (i % 4); n += 1) {
          const submit = (i + n) % 2 === 0 ? () => ctx.scores.submit(scorer.id, address) : () => peer.submit(scorer.id, address);
          submissions.push(sleep(Math.floor(Math.random() * 150)).then(submit));
        }
      }
      expect(submissions.length).toBeGreaterThanOrEqual(60);
      const answers = await Promise.all(submissions);
      expect(answers.every((a) => a.status === 'PROCESSING' || a.status === 'DONE')).toBe(true);

      await until(
        'the queue to drain',
        async () => {
          const [jobs, pending] = await Promise.all([
            jobRows(ctx),
            ctx.database.db.selectFrom('scores').select('address').where('status', '!=', 'DONE').execute(),
          ]);
          return jobs.length === 0 && pending.length === 0;
        },
        12_000,
      );
      await until('every run to be reported', () => recorder.doneFor(...addresses.map((address) => keyOf(scorer.id, address))));

      expect(recorder.windows.length).toBe(recorder.runs.length);
      expect(recorder.overlaps()).toEqual([]);
      expect(recorder.unmatched).toEqual([]);
      expect(recorder.failureMessages()).toEqual([]);
      expect(recorder.outcomes().filter((o) => o !== 'done' && o !== 'rerun')).toEqual([]);
      // Both processes did part of the work, and no run happened without a submission asking for it.
      expect(new Set(recorder.runs.map((r) => r.worker))).toEqual(new Set(['first', 'second']));
      expect(recorder.runs.length).toBeLessThanOrEqual(submissions.length);

      const rows = await ctx.database.db.selectFrom('scores').selectAll().where('scorer_id', '=', scorer.id).execute();
      expect(rows).toHaveLength(addresses.length);
      for (const [i, address] of addresses.entries()) {
        const row = rows.find((r) => r.address === address);
        expect(row, address).toMatchObject({ status: 'DONE', score: expectedScore(ctx, stampsOf(i)), error: null });
        expect(recorder.outcomes(keyOf(scorer.id, address)), address).toContain('done');
      }
    });
  });

  describe('coalescing', () => {
    it('turns many concurrent submissions of one address into one job and one run', async () => {
      const { ctx } = await setUp();
      const { scorer } = await seedAccount(ctx);
      const address = randomAddress();
      await giveStamps(ctx, address, ['Google', 'Discord']);

      const submissions = 25;
      let sampling = true;
      let mostJobs = 0;
      const sampler = (async () => {
        while (sampling) {
          mostJobs = Math.max(mostJobs, (await jobRows(ctx, scorer.id, address)).length);
          await sleep(1);
        }
      })();
      const records = await Promise.all(Array.from({ length: submissions }, () => ctx.scores.submit(scorer.id, address)));
      sampling = false;
      await sampler;

      expect(records.every((r) => r.status === 'PROCESSING')).toBe(true);
      expect(mostJobs).toBeLessThanOrEqual(1);
      expect(await jobRows(ctx, scorer.id, address)).toMatchObject([{ state: 'queued', generation: submissions, attempts: 0 }]);

      const recorder = new Recorder().watch(ctx.worker, 'worker');
      ctx.worker.start();
      await until('the score to be DONE', async () => (await scoreRow(ctx, scorer.id, address))?.status === 'DONE');
      await until('the run to settle', () => recorder.allSettled());
      await sleep(100);
      expect(recorder.outcomes()).toEqual(['done']);
      expect(await scoreRow(ctx, scorer.id, address)).toMatchObject({ score: expectedScore(ctx, ['Google', 'Discord']) });
      expect(await jobRows(ctx)).toEqual([]);
    });

    it('runs once more when a submission arrives during a run, and the final score has the stamps added meanwhile', async () => {
      const { ctx } = await setUp();
      const { scorer } = await seedAccount(ctx);
      const address = randomAddress();
      await giveStamps(ctx, address, ['Google']);

      const outcomes: ScoringOutcome[] = [];
      const firstScored = deferred();
      let hold = deferred();
      const worker = track(
        testWorker(ctx, {
          afterScoring: (_scorerId, _address, outcome) => {
            if (outcome) outcomes.push(outcome);
            firstScored.resolve();
            return hold.promise;
          },
        }),
      );
      const recorder = new Recorder().watch(worker, 'worker');
      worker.start();

      await ctx.scores.submit(scorer.id, address);
      // The first run has read the stamps and computed its result; it has not recorded it yet.
      await firstScored.promise;
      const [firstRun] = recorder.runs as [Run];
      expect(firstRun.job).toMatchObject({ generation: 1, claimed_generation: 1 });
      expect(outcomes.map((o) => o.score)).toEqual([expectedScore(ctx, ['Google'])]);

      await giveStamps(ctx, address, ['Discord']);
      const during = await ctx.scores.submit(scorer.id, address);
      expect(during.status).toBe('PROCESSING');
      expect(await jobRows(ctx, scorer.id, address)).toMatchObject([
        { id: firstRun.job.id, state: 'running', generation: 2, claimed_generation: 1, lease_owner: worker.owner },
      ]);

      const released = hold;
      hold = { promise: Promise.resolve(), resolve: () => {} };
      released.resolve();
      await until('the score to be DONE', async () => (await scoreRow(ctx, scorer.id, address))?.status === 'DONE');
      await until('the runs to settle', () => recorder.allSettled());
      await sleep(100);

      expect(recorder.outcomes()).toEqual(['rerun', 'done']);
      expect(recorder.runs[1]?.job).toMatchObject({ generation: 2, claimed_generation: 2 });
      expect(outcomes.map((o) => o.score)).toEqual([expectedScore(ctx, ['Google']), expectedScore(ctx, ['Google', 'Discord'])]);
      expect(await scoreRow(ctx, scorer.id, address)).toMatchObject({ status: 'DONE', score: expectedScore(ctx, ['Google', 'Discord']), error: null });
      expect(await jobRows(ctx)).toEqual([]);
      expect(recorder.overlaps()).toEqual([]);
    });

    it('with a worker running, concurrent submissions share runs and never hold two jobs for one address', async () => {
      const { ctx } = await setUp();
      const { scorer } = await seedAccount(ctx);
      const address = randomAddress();
      await giveStamps(ctx, address, ['Linkedin', 'Ens']);
      const recorder = new Recorder().watch(ctx.worker, 'worker');
      ctx.worker.start();

      let sampling = true;
      let mostJobs = 0;
      const sampler = (async () => {
        while (sampling) {
          mostJobs = Math.max(mostJobs, (await jobRows(ctx, scorer.id, address)).length);
          await sleep(1);
        }
      })();
      const submissions = 20;
      await Promise.all(Array.from({ length: submissions }, () => ctx.scores.submit(scorer.id, address)));
      await until('the queue to drain', async () => (await jobRows(ctx)).length === 0);
      sampling = false;
      await sampler;
      await until('the runs to settle', () => recorder.allSettled());

      expect(mostJobs).toBeLessThanOrEqual(1);
      expect(recorder.runs.length).toBeGreaterThanOrEqual(1);
      expect(recorder.runs.length).toBeLessThan(submissions);
      expect(recorder.outcomes().at(-1)).toBe('done');
      expect(await scoreRow(ctx, scorer.id, address)).toMatchObject({ status: 'DONE', score: expectedScore(ctx, ['Linkedin', 'Ens']) });
    });

    it('never loses a submission that arrives while its job is being completed', async () => {
      const { ctx } = await setUp();
      const { scorer } = await seedAccount(ctx);
      const address = randomAddress();
      const now = Date.now();
      await ctx.jobs.enqueue(scorer.id, address, now);
      const job = await ctx.jobs.claimNext('owner', now, 30_000);
      if (!job) throw new Error('no job claimed');

      // On PostgreSQL, make the interleaving certain: another transaction holds the nullifier the
      // completion needs, so the completion stops half-way (job row locked) while the submission
      // comes in, and goes on once that transaction rolls back. SQLite has a single writer, so
      // the two simply run one after the other there.
      const nullifier = `n-${randomBytes(4).toString('hex')}`;
      let blocker: { done: Promise<void>; release(): void } | null = null;
      let blockerDb: Database | null = null;
      if (kind === 'postgres') {
        blockerDb = current().test.open();
        cleanups.push(() => (blockerDb as Database).close());
        const inserted = deferred();
        const release = deferred();
        const done = blockerDb.db
          .transaction()
          .execute(async (trx) => {
            await trx.insertInto('nullifier_holds').values({ scorer_id: scorer.id, nullifier, address: randomAddress(), expires_at: now + day }).execute();
            inserted.resolve();
            await release.promise;
            throw new Error('roll back');
          })
          .catch(() => {});
        await inserted.promise;
        blocker = { done, release: release.resolve };
      }
      const completing = ctx.jobs.complete(job, 'owner', now + 1, { score: '1.00000', evidence: null, expirationDate: null, stampScores: '{}', claims: [{ nullifier, expiresAt: now + day }] });
      if (blocker) await sleep(200);
      const submitting = ctx.jobs.enqueue(scorer.id, address, now + 2);
      if (blocker) {
        await sleep(200);
        blocker.release();
        await blocker.done;
      }
      const [completed, submitted] = await Promise.allSettled([completing, submitting]);

      expect(submitted).toEqual({ status: 'fulfilled', value: undefined });
      expect(completed.status).toBe('fulfilled');
      // Whatever the order, the later submission is still to be scored.
      expect(await scoreRow(ctx, scorer.id, address)).toMatchObject({ status: 'PROCESSING' });
      expect(await jobRows(ctx, scorer.id, address)).toMatchObject([{ state: 'queued' }]);
    });
  });

  describe('retries and ERROR', () => {
    it('retries a failing job with backoff, then sets ERROR with a short sentence; a later good run clears it', async () => {
      const backoffMs = 800;
      const { ctx } = await setUp({ SCORING_MAX_ATTEMPTS: '2', SCORING_BACKOFF_MS: String(backoffMs) });
      const { scorer } = await seedAccount(ctx);
      const address = randomAddress();
      await giveStamps(ctx, address, ['Google', 'Discord']);
      await setWeights(ctx, scorer.id, '{"Google":"abc"}');

      const recorder = new Recorder().watch(ctx.worker, 'worker');
      ctx.worker.start();
      await ctx.scores.submit(scorer.id, address);

      await until('the first attempt to settle', () => recorder.runs[0]?.outcome !== undefined);
      expect(recorder.runs[0]?.outcome).toBe('rerun');
      const [queued] = await jobRows(ctx);
      expect(queued).toMatchObject({ state: 'queued', attempts: 1, lease_owner: null });
      if (!queued) throw new Error('unreachable');
      // Retried later, not at once: the next attempt is due a backoff after the first one.
      expect(queued.run_after).toBeGreaterThanOrEqual((recorder.runs[0] as Run).startedWall + backoffMs);
      expect(queued.last_error).toMatch(/weight/);
      expect(await scoreRow(ctx, scorer.id, address)).toMatchObject({ status: 'PROCESSING', score: null, error: null });

      await until('the second attempt to settle', () => recorder.runs[1]?.outcome !== undefined, 5000);
      expect(recorder.runs).toHaveLength(2);
      expect(recorder.outcomes()).toEqual(['rerun', 'error']);
      expect((recorder.runs[1] as Run).startedWall).toBeGreaterThanOrEqual(queued.run_after);
      expect((recorder.runs[1] as Run).job.attempts).toBe(2);
      const failed = await scoreRow(ctx, scorer.id, address);
      expect(failed).toMatchObject({ status: 'ERROR', score: null, evidence: null, stamp_scores: '{}', expiration_date: null });
      const error = failed?.error ?? '';
      expect(error).toMatch(/^[A-Z].*\.$/s);
      expect(error.length).toBeLessThanOrEqual(200);
      expect(error).toContain('Google');
      expect(error).not.toMatch(/\n|\s+at |\/work\/|node_modules|select |Error:/);
      expect(await jobRows(ctx)).toEqual([]);
      expect(recorder.failures.length).toBe(2);

      // The operator fixes the scorer and the integrator submits again.
      await setWeights(ctx, scorer.id, '{}');
      await ctx.scores.submit(scorer.id, address);
      await until('the score to be DONE', async () => (await scoreRow(ctx, scorer.id, address))?.status === 'DONE');
      expect(await scoreRow(ctx, scorer.id, address)).toMatchObject({
        status: 'DONE',
        score: expectedScore(ctx, ['Google', 'Discord']),
        error: null,
        expiration_date: expect.any(Number),
      });
      expect(Object.keys(JSON.parse((await scoreRow(ctx, scorer.id, address))?.stamp_scores ?? 'null'))).toEqual(['Discord', 'Google']);
      expect(await jobRows(ctx)).toEqual([]);
    });

    it('does not drop a re-submission that arrives while the last attempt of a failing job is running', async () => {
      const { ctx } = await setUp();
      const { scorer } = await seedAccount(ctx);
      const address = randomAddress();
      await giveStamps(ctx, address, ['Google']);
      await setWeights(ctx, scorer.id, '{"Google":"abc"}');

      const failing = deferred();
      const hold = deferred();
      const worker = track(
        testWorker(
          ctx,
          {
            afterFailure: () => {
              failing.resolve();
              return hold.promise;
            },
          },
          { maxAttempts: 1 },
        ),
      );
      const recorder = new Recorder().watch(worker, 'worker');
      worker.start();
      await ctx.scores.submit(scorer.id, address);
      await failing.promise;

      // While the doomed last attempt is still in hand, the scorer is fixed and the address submitted again.
      await setWeights(ctx, scorer.id, '{}');
      await ctx.scores.submit(scorer.id, address);
      hold.resolve();

      await until('the runs to settle and the queue to drain', async () => recorder.allSettled() && (await jobRows(ctx)).length === 0);
      await until('the score to leave PROCESSING', async () => (await scoreRow(ctx, scorer.id, address))?.status !== 'PROCESSING', 2000);
      // The re-submission came after the fix, so it must be scored: DONE, not the stale attempt's ERROR.
      expect(await scoreRow(ctx, scorer.id, address)).toMatchObject({ status: 'DONE', score: expectedScore(ctx, ['Google']), error: null });
    });
  });

  describe('deduplication races', () => {
    it('gives a shared nullifier to exactly one of two addresses scored at the same moment by two workers', async () => {
      const { ctx } = await setUp();
      const { account, scorer } = await seedAccount(ctx);
      const shared = `shared-${randomBytes(6).toString('hex')}`;
      const [a, b] = [randomAddress(), randomAddress()];
      for (const address of [a, b]) await giveStamps(ctx, address, [{ provider: 'Google', nullifiers: [shared] }, 'Discord']);

      // Each worker takes one job (concurrency 1) and computes its score before either records it.
      const peer = await openPeer({ hold: true, workerOptions: { concurrency: 1 } });
      const peerScored = new Promise<void>((resolve) => peer.once('scored', () => resolve()));
      const localScored = deferred();
      const localGate = deferred();
      let holding = true;
      const local = track(
        testWorker(ctx, {
          afterScoring: async () => {
            if (!holding) return;
            localScored.resolve();
            await localGate.promise;
          },
        }, { concurrency: 1 }),
      );
      const recorder = new Recorder().watch(local, 'first').watch(peer, 'second');
      await ctx.scores.submit(scorer.id, a);
      await peer.submit(scorer.id, b);
      local.start();
      await peer.start();
      await Promise.race([
        Promise.all([localScored.promise, peerScored]),
        sleep(5000).then(() => {
          throw new Error('the two workers did not both score');
        }),
      ]);
      expect(recorder.runs.map((r) => r.worker).sort()).toEqual(['first', 'second']);

      // Both computed with the nullifier unheld. The peer records first; this worker then must not.
      await peer.release();
      await until('the peer’s run to settle', () => recorder.runs.some((r) => r.worker === 'second' && r.outcome !== undefined));
      holding = false;
      localGate.resolve();
      await until(
        'both scores to be DONE',
        async () => (await scoreRow(ctx, scorer.id, a))?.status === 'DONE' && (await scoreRow(ctx, scorer.id, b))?.status === 'DONE',
      );
      await until('the runs to be reported', () => recorder.doneFor(keyOf(scorer.id, a), keyOf(scorer.id, b)));

      const both = expectedScore(ctx, ['Google', 'Discord']);
      const discordOnly = expectedScore(ctx, ['Discord']);
      const winner = recorder.runs.find((r) => r.worker === 'second')?.job.address;
      const loser = winner === a ? b : a;
      // The loser's first result was dropped and it was scored again, seeing the winner's hold.
      expect(recorder.outcomes(keyOf(scorer.id, loser))).toEqual(['rerun', 'done']);
      expect(recorder.outcomes(keyOf(scorer.id, winner ?? ''))).toEqual(['done']);
      expect((await scoreRow(ctx, scorer.id, winner ?? ''))?.score).toBe(both);
      expect((await scoreRow(ctx, scorer.id, loser))?.score).toBe(discordOnly);
      expect(await holdsOf(ctx, scorer.id, shared)).toMatchObject([{ address: winner }]);
      expect(recorder.failureMessages()).toEqual([]);

      // Nothing is shared across scorers: in another scorer the loser gets the points.
      const elsewhere = await ctx.accounts.createScorer(account.id, { name: 'Another scorer' });
      await ctx.scores.submit(elsewhere.id, loser);
      await until('the other scorer’s score to be DONE', async () => (await scoreRow(ctx, elsewhere.id, loser))?.status === 'DONE');
      expect((await scoreRow(ctx, elsewhere.id, loser))?.score).toBe(both);
      expect(await holdsOf(ctx, elsewhere.id, shared)).toMatchObject([{ address: loser }]);
      expect(await holdsOf(ctx, scorer.id, shared)).toMatchObject([{ address: winner }]);
      expect((await scoreRow(ctx, scorer.id, loser))?.score).toBe(discordOnly);
    });

    it('resolves concurrent submissions of pairs sharing a nullifier, through two processes, the same way', async () => {
      const { ctx } = await setUp();
      const { scorer } = await seedAccount(ctx);
      const pairs = Array.from({ length: 4 }, () => ({
        shared: `shared-${randomBytes(6).toString('hex')}`,
        a: randomAddress(),
        b: randomAddress(),
      }));
      for (const { shared, a, b } of pairs) {
        for (const address of [a, b]) await giveStamps(ctx, address, [{ provider: 'Linkedin', nullifiers: [shared] }, 'Google']);
      }
      const peer = await openPeer({ instrument: true });
      const local = track(testWorker(ctx));
      const recorder = new Recorder().watch(local, 'first').watch(peer, 'second');
      local.start();
      await peer.start();

      await Promise.all(pairs.flatMap(({ a, b }) => [ctx.scores.submit(scorer.id, a), peer.submit(scorer.id, b)]));
      await until('every pair to be DONE', async () => {
        const rows = await ctx.database.db.selectFrom('scores').select('status').where('scorer_id', '=', scorer.id).execute();
        return rows.length === 8 && rows.every((r) => r.status === 'DONE');
      });
      await until('the runs to be reported', () =>
        recorder.doneFor(...pairs.flatMap(({ a, b }) => [keyOf(scorer.id, a), keyOf(scorer.id, b)])),
      );

      const both = expectedScore(ctx, ['Google', 'Linkedin']);
      const googleOnly = expectedScore(ctx, ['Google']);
      for (const { shared, a, b } of pairs) {
        const scoreA = (await scoreRow(ctx, scorer.id, a))?.score;
        const scoreB = (await scoreRow(ctx, scorer.id, b))?.score;
        expect([scoreA, scoreB].sort()).toEqual([both, googleOnly].sort());
        expect(await holdsOf(ctx, scorer.id, shared)).toMatchObject([{ address: scoreA === both ? a : b }]);
      }
      expect(recorder.overlaps()).toEqual([]);
      expect(recorder.failureMessages()).toEqual([]);
    });
  });

  describe('graceful stop', () => {
    it('stop() waits for the job in hand, and a stopped worker takes no more jobs', async () => {
      const { ctx } = await setUp();
      const { scorer } = await seedAccount(ctx);
      const [a, b] = [randomAddress(), randomAddress()];
      await giveStamps(ctx, a, ['Google']);
      await giveStamps(ctx, b, ['Discord']);

      const hold = deferred();
      const worker = track(testWorker(ctx, { afterScoring: () => hold.promise }));
      const recorder = new Recorder().watch(worker, 'worker');
      worker.start();
      await ctx.scores.submit(scorer.id, a);
      await until('the run to start', () => recorder.runs.length === 1);

      let stopped = false;
      const stopping = worker.stop().then(() => {
        stopped = true;
      });
      await sleep(200);
      expect(stopped).toBe(false);
      expect(await scoreRow(ctx, scorer.id, a)).toMatchObject({ status: 'PROCESSING' });

      hold.resolve();
      await stopping;
      // Everything the run does is done by the time stop() resolves.
      expect(recorder.outcomes()).toEqual(['done']);
      expect(await scoreRow(ctx, scorer.id, a)).toMatchObject({ status: 'DONE', score: expectedScore(ctx, ['Google']) });
      expect(await jobRows(ctx)).toEqual([]);

      // Stopped: neither a notification nor polling makes it take work.
      await ctx.scores.submit(scorer.id, b);
      worker.notify();
      await sleep(300);
      expect(recorder.runs).toHaveLength(1);
      expect(await jobRows(ctx)).toMatchObject([{ address: b, state: 'queued', lease_owner: null, attempts: 0 }]);
    });

    it('stopped while it is taking a job from the database, a worker runs and holds nothing after stop() resolves', async () => {
      const { ctx } = await setUp();
      const { scorer } = await seedAccount(ctx);
      const addresses = Array.from({ length: 3 }, () => randomAddress());
      for (const address of addresses) await giveStamps(ctx, address, ['Google']);
      const recorder = new Recorder().watch(ctx.worker, 'worker');
      for (const address of addresses) await ctx.scores.submit(scorer.id, address);

      // start() begins a claim at once; stop() comes before that claim has returned.
      ctx.worker.start();
      await ctx.worker.stop();
      const runsAtStop = recorder.runs.length;
      const settledAtStop = recorder.runs.filter((r) => r.outcome !== undefined).length;

      await sleep(300);
      expect(runsAtStop).toBe(settledAtStop);
      expect(recorder.runs).toHaveLength(runsAtStop);
      const jobs = await jobRows(ctx);
      expect(jobs.filter((j) => j.state === 'running')).toEqual([]);
      expect(jobs).toHaveLength(addresses.length - runsAtStop);
    });
  });
});
