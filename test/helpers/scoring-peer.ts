/**
 * The second process of the scoring queue tests (test/scoring/scoring-queue, scoring-workers and
 * scoring-failures .test.ts), in a worker thread: its own event loop, its own AppContext and
 * connection(s) to the same database and data directory. A thread, not a second context in the
 * test's thread, because a better-sqlite3 connection waits for a lock synchronously
 * (busy_timeout): in one thread a waiting connection freezes the very event loop the lock holder
 * needs to finish, which two real processes never do.
 *
 * Loading the application into a thread takes seconds, so one thread serves a whole test file
 * (`usePeerThread()`); each test opens (and closes) its own context in it. The peer's worker is its
 * context's own, or, with `instrument`/`hold`, one built the same way that reports scoring windows
 * and (with `hold`) waits for release() after scoring while holding is on, having reported `scored`.
 */
import { EventEmitter } from 'node:events';
import { createRequire } from 'node:module';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll } from 'vitest';
import type { ScoringJobRow } from '../../src/scoring/jobs/scoring-jobs.repository.js';
import type { JobSettled, ScoringWorkerOptions } from '../../src/scoring/jobs/scoring-worker.js';
import type { ScoreRecord } from '../../src/scoring/scores/scores.service.js';
import type { TestApp } from './app.js';

/** Settings shared by every context of these tests: answer at once, poll often. */
export const fastEnv = { SUBMIT_WAIT_MS: '0', SCORING_POLL_MS: '25' };

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
      load('/src/app/container.ts'),
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
      // Built like the context's own worker, plus scoring windows and holding (see testWorker() in ./scoring-queue.ts).
      const deps = { stamps: stampsRepository(ctx.database), issuers: ctx.issuers, catalogue: ctx.catalogue, accounts: ctx.accounts };
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
export class Peer extends EventEmitter {
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

/**
 * Starts this file's peer thread before its tests (loading the application into it takes a few
 * seconds, far more on a machine busy with other test runs) and ends it after them.
 */
export function usePeerThread(): void {
  beforeAll(async () => {
    await sharedPeerThread();
  }, 120_000);
  afterAll(async () => {
    await peerWorkerThread?.terminate();
  });
}
