import { PollingLoop } from '../../events/polling-loop.js';
import { EventEmitter } from 'node:events';
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { isDatabaseUnavailable } from '../../db/availability.js';
import type { ScoringJobRow, ScoringJobsRepository } from './scoring-jobs.repository.js';
import type { ScoringOutcome } from '../records/score-outcome.js';

export interface ScoringWorkerOptions {
  /** Jobs scored at the same time by this worker. */
  concurrency: number;
  /** How long a claim is exclusive; a worker that dies loses its jobs after this. */
  leaseMs: number;
  /** How often an idle worker looks for work (jobs of other processes, retries, expired leases). */
  pollMs: number;
  /** Attempts before a job is given up and its score set to ERROR. */
  maxAttempts: number;
  /** First retry delay; each further retry doubles it. */
  backoffBaseMs: number;
  /** Announces written score rows to every process; awaited before `settled` (the acknowledgement). */
  scoresWritten?: (scorerId: number, addresses: readonly string[]) => Promise<void>;
  /** How often a running job's lease is renewed (default: a third of `leaseMs`, so two missed beats still keep it). */
  heartbeatMs?: number;
  /** Where the polling loop records that this worker is alive (see WorkerWatch), every third of `leaseMs`. */
  presence?: WorkerPresence;
}

/** The worker's own heartbeat, as opposed to a job's lease renewal. */
export interface WorkerPresence {
  beat(owner: string, now: number): Promise<void>;
  forgetLongGone(now: number): Promise<void>;
}

/** A heartbeat's result (the `leaseRenewed` event): whether the lease is still held, and until when. */
export interface LeaseRenewal {
  jobId: number;
  held: boolean;
  expiresAt: number;
}

export type JobSettled = {
  scorerId: number;
  address: string;
  outcome: 'done' | 'error' | 'rerun' | 'lost';
  /** The clock just before the outcome was written: the job may be claimed again from then on, not before. */
  completingAt: number;
};

type ScoreFn = (scorerId: number, address: string, now: number) => Promise<ScoringOutcome>;

/**
 * Takes scoring jobs from the durable queue and runs them. Emits `settled`
 * after each job so that a waiting submission in the same process can answer
 * at once instead of polling.
 */
export class ScoringWorker extends EventEmitter {
  readonly owner = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  readonly #jobs: ScoringJobsRepository;
  readonly #score: ScoreFn;
  readonly #options: ScoringWorkerOptions;
  readonly #clock: () => number;
  readonly #inFlight = new Set<Promise<void>>();
  readonly #loop: PollingLoop;
  // The last pump stopped because every slot was taken, so due jobs may be waiting for one.
  #slotsFull = false;
  #claimPending = false;
  // When the polling loop last recorded this worker's presence (null: not yet since start).
  #lastPresenceAt: number | null = null;

  constructor(jobs: ScoringJobsRepository, score: ScoreFn, options: ScoringWorkerOptions, clock: () => number = Date.now) {
    super();
    this.setMaxListeners(0);
    this.#jobs = jobs;
    this.#score = score;
    this.#options = options;
    this.#clock = clock;
    this.#loop = new PollingLoop(() => this.#pass(), {
      pollMs: options.pollMs,
      timer: 'restart',
      onError: (error) => this.emit('failure', error),
    });
  }

  start(): void {
    this.#lastPresenceAt = null;
    this.#loop.start();
  }

  /** Resolves when the worker's look for work under way, if any, is over (its claims answered). */
  async lookedForWork(): Promise<void> {
    await this.#loop.pumping;
  }

  /** Looks for work now (called after a submission in this process). */
  notify(): void {
    this.#loop.wake();
  }

  /**
   * Runs `work` (a submission scored in the submitting process) in one of this worker's slots, so
   * that inline scorings and jobs together stay within `concurrency`; null, without running it,
   * when the worker is not running (`serve --no-worker`, shutdown) or every slot is taken. stop()
   * waits for it like for a job.
   */
  runInline<T>(work: () => Promise<T>): Promise<T> | null {
    // A claim on its way back may fill a slot too: it counts as taken.
    const taken = this.#inFlight.size + (this.#claimPending ? 1 : 0);
    if (!this.#loop.running || taken >= this.#options.concurrency) return null;
    let release!: () => void;
    const slot = new Promise<void>((resolve) => (release = resolve));
    this.#inFlight.add(slot);
    let result: Promise<T>;
    try {
      result = work();
    } catch (error) {
      result = Promise.reject(error);
    }
    void result
      .catch(() => {})
      .finally(() => {
        this.#inFlight.delete(slot);
        release();
        // A freed slot matters only to jobs that found none: otherwise the queue is not looked at
        // (no claim statement per inline scoring).
        if (this.#slotsFull) this.notify();
      });
    return result;
  }

  /** Stops taking jobs and waits for the ones in hand to finish. */
  async stop(): Promise<void> {
    // A claim may be on its way back from the database; it is released, not left leased.
    await this.#loop.stop();
    await Promise.allSettled([...this.#inFlight]);
  }

  /** One pass: claims due jobs while slots are free (PollingLoop runs it again if woken meanwhile). */
  async #pass(): Promise<void> {
    this.#slotsFull = false;
    await this.#recordPresence();
    while (this.#loop.running) {
      if (this.#inFlight.size >= this.#options.concurrency) {
        this.#slotsFull = true;
        break;
      }
      const job = await this.#claim();
      if (!job) break;
      if (!this.#loop.running) {
        await this.#jobs.release(job, this.owner, this.#clock()).catch((error) => this.emit('failure', error));
        break;
      }
      const run = this.#run(job).finally(() => {
        this.#inFlight.delete(run);
        this.notify();
      });
      this.#inFlight.add(run);
    }
  }

  /**
   * Every third of a lease, from the loop itself: a loop that stops looking for work stops
   * beating. A pass runs at least every `pollMs`, even with every slot taken.
   */
  async #recordPresence(): Promise<void> {
    const presence = this.#options.presence;
    const now = this.#clock();
    if (!presence || (this.#lastPresenceAt !== null && now - this.#lastPresenceAt < this.#options.leaseMs / 3)) return;
    const first = this.#lastPresenceAt === null;
    this.#lastPresenceAt = now;
    try {
      await presence.beat(this.owner, now);
      if (first) await presence.forgetLongGone(now);
    } catch (error) {
      this.emit('failure', error);
    }
  }

  async #claim(): Promise<ScoringJobRow | undefined> {
    // The slot this claim may fill is taken from now on (see runInline).
    this.#claimPending = true;
    try {
      // better-sqlite3 answers synchronously, so without this a backlog would be worked off in
      // microtasks alone and starve timers, HTTP and signal handlers until it is empty.
      await yieldToEventLoop();
      if (!this.#loop.running) return undefined;
      return await this.#jobs.claimNext(this.owner, this.#clock(), this.#options.leaseMs);
    } catch (error) {
      this.emit('failure', error);
      return undefined;
    } finally {
      this.#claimPending = false;
    }
  }

  async #run(job: ScoringJobRow): Promise<void> {
    this.emit('started', job);
    let outcome: JobSettled['outcome'];
    let completingAt = this.#clock();
    const stopHeartbeat = this.#heartbeat(job);
    try {
      const result = await this.#score(job.scorer_id, job.address, completingAt);
      completingAt = this.#clock();
      outcome = await this.#jobs.complete(job, this.owner, completingAt, result);
    } catch (error) {
      completingAt = this.#clock();
      outcome = await this.#recordFailure(job, error);
    } finally {
      stopHeartbeat();
    }
    if (outcome !== 'lost' && this.#options.scoresWritten) {
      await this.#options.scoresWritten(job.scorer_id, [job.address]).catch((error) => this.emit('failure', error));
    }
    this.emit('settled', { scorerId: job.scorer_id, address: job.address, outcome, completingAt } satisfies JobSettled);
  }

  /**
   * Renews the job's lease while it runs, so a run longer than one lease is not taken over by
   * another worker; a worker that dies stops renewing and its job is free one lease after the
   * last beat. Returns the function that stops the beats.
   */
  #heartbeat(job: ScoringJobRow): () => void {
    const { leaseMs } = this.#options;
    let beating = false;
    const timer = setInterval(() => {
      if (beating) return;
      beating = true;
      const now = this.#clock();
      this.#jobs
        .renewLease(job, this.owner, now, leaseMs)
        .then((held) => this.emit('leaseRenewed', { jobId: job.id, held, expiresAt: now + leaseMs } satisfies LeaseRenewal))
        .catch((error) => this.emit('failure', error))
        .finally(() => (beating = false));
    }, this.#options.heartbeatMs ?? Math.max(1, Math.floor(leaseMs / 3)));
    timer.unref();
    return () => clearInterval(timer);
  }

  async #recordFailure(job: ScoringJobRow, error: unknown): Promise<JobSettled['outcome']> {
    this.emit('failure', error);
    if (isDatabaseUnavailable(error)) {
      // The database failed, not the job: it runs again shortly without spending an attempt, so
      // that an outage or a dropped connection never turns a score into ERROR.
      try {
        await this.#jobs.release(job, this.owner, this.#clock(), this.#clock() + this.#options.backoffBaseMs);
      } catch (releaseError) {
        // Unreachable still: the lease runs out and the job is taken over then.
        this.emit('failure', releaseError);
      }
      return 'rerun';
    }
    const message = shortError(error);
    const retry = job.attempts < this.#options.maxAttempts;
    const retryAt = retry ? this.#clock() + this.#options.backoffBaseMs * 2 ** (job.attempts - 1) : null;
    try {
      return await this.#jobs.fail(job, this.owner, this.#clock(), message, retryAt);
    } catch (failError) {
      // The lease runs out and another attempt follows; nothing else can be done here.
      this.emit('failure', failError);
      return 'rerun';
    }
  }
}

/** A sentence for the score record's `error`, without internals. */
function shortError(error: unknown): string {
  const name = (error as Error)?.name;
  if (name === 'ScoringInputError' || name === 'DecimalFormatError') {
    return `The scorer's settings cannot be used: ${(error as Error).message}.`;
  }
  if (name === 'AppError') return (error as Error).message;
  return 'Scoring failed because of an internal error; it was retried and gave up.';
}

interface WorkerLog {
  debug(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/**
 * Log lines of a worker's jobs: debug per job (with timings), a warning per failure, except those
 * `isOutage` claims (a database outage is logged once, by the database's availability tracker).
 */
export function logWorkerEvents(worker: ScoringWorker, log: WorkerLog, isOutage: (error: unknown) => boolean = () => false): void {
  worker.on('started', (job: ScoringJobRow) =>
    log.debug(
      { owner: worker.owner, scorerId: job.scorer_id, address: job.address, attempt: job.attempts, leaseExpiresAt: job.lease_expires_at, at: Date.now() },
      'scoring job started',
    ),
  );
  worker.on('settled', (settled: JobSettled) =>
    log.debug({ owner: worker.owner, ...settled, at: Date.now() }, 'scoring job settled'),
  );
  worker.on('failure', (error: Error) => {
    if (!isOutage(error)) log.warn({ owner: worker.owner, err: error?.message }, 'scoring job attempt failed');
  });
}
