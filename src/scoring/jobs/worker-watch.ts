import type { ScoringJobsRepository } from './scoring-jobs.repository.js';
import type { WorkerHeartbeatsRepository } from './worker-heartbeats.repository.js';

/** A readiness note (the shape of `/health/ready`'s `warnings`). */
export interface WorkerAbsence {
  code: 'no_scoring_worker';
  detail: string;
}

export interface WorkerWatchOptions {
  /** The workers' lease: they beat every third of it, and one unseen for a whole lease (plus a poll) counts as gone. */
  leaseMs: number;
  pollMs: number;
  log: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };
  clock?: () => number;
}

/**
 * Notices, in an API process, that scoring jobs are due while no scoring worker has looked for work
 * within the threshold (`serve --no-worker` with no `stampgate worker` running, or every worker
 * stuck): submissions would stay PROCESSING without a word. One warning per such episode, one line
 * when it ends, and the note `absence` for the readiness answer meanwhile.
 */
export class WorkerWatch {
  readonly #jobs: ScoringJobsRepository;
  readonly #heartbeats: WorkerHeartbeatsRepository;
  readonly #options: WorkerWatchOptions;
  readonly #clock: () => number;
  #timer: NodeJS.Timeout | null = null;
  #startedAt = 0;
  #checking = false;
  #absence: WorkerAbsence | null = null;

  constructor(jobs: ScoringJobsRepository, heartbeats: WorkerHeartbeatsRepository, options: WorkerWatchOptions) {
    this.#jobs = jobs;
    this.#heartbeats = heartbeats;
    this.#options = options;
    this.#clock = options.clock ?? Date.now;
  }

  /** How long no worker may be seen while jobs are due: beats come a third of a lease apart, at the loop's next pass. */
  get thresholdMs(): number {
    return this.#options.leaseMs + this.#options.pollMs;
  }

  /** The current episode's note, or null while a worker is seen (or nothing waits). */
  get absence(): WorkerAbsence | null {
    return this.#absence;
  }

  start(): void {
    if (this.#timer) return;
    this.#startedAt = this.#clock();
    this.#timer = setInterval(() => void this.check(), Math.max(1, Math.floor(this.#options.leaseMs / 3)));
    this.#timer.unref();
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
  }

  /** Looks once (the timer calls it); a failed look (the database is away) changes nothing. */
  async check(): Promise<void> {
    if (this.#checking) return;
    this.#checking = true;
    try {
      const now = this.#clock();
      const due = await this.#jobs.dueJobs(now);
      const lastSeen = due === 0 ? null : await this.#heartbeats.lastSeen();
      // A worker never seen is unseen since this process began to look: no warning at start-up.
      const unseenSince = lastSeen ?? this.#startedAt;
      if (due > 0 && now - unseenSince >= this.thresholdMs) this.#enter(now, unseenSince, lastSeen, due);
      else this.#leave(due);
    } catch {
      // The database's availability tracker logs an outage; the next look tries again.
    } finally {
      this.#checking = false;
    }
  }

  #enter(now: number, unseenSince: number, lastSeen: number | null, due: number): void {
    const seconds = Math.round((now - unseenSince) / 1000);
    const detail =
      `No scoring worker seen for ${seconds} s while ${due} scoring job(s) wait: their submissions stay PROCESSING ` +
      'until a worker runs (`stampgate worker`, or `stampgate serve` without --no-worker).';
    const starting = this.#absence === null;
    this.#absence = { code: 'no_scoring_worker', detail };
    if (starting) {
      this.#options.log.warn(
        { waitingJobs: due, unseenForSeconds: seconds, lastWorkerSeenAt: lastSeen === null ? null : new Date(lastSeen).toISOString() },
        `no scoring worker seen for ${seconds} s while ${due} scoring job(s) wait`,
      );
    }
  }

  #leave(due: number): void {
    if (this.#absence === null) return;
    this.#absence = null;
    this.#options.log.info({ waitingJobs: due }, due === 0 ? 'no scoring job waits any more' : 'a scoring worker is seen again');
  }
}
