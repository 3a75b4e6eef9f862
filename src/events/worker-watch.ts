/** A readiness note (the shape of `/health/ready`'s `warnings`). */
export interface WorkerAbsence {
  code: 'no_scoring_worker' | 'no_push_worker';
  detail: string;
}

/** What one kind of worker leaves waiting, and when such a worker last looked for work. */
export interface WorkerProbe {
  /** Work that only such a worker does, waiting at `now`. */
  waiting(now: number): Promise<number>;
  /** When such a worker last looked for work, or null when none ever did. */
  lastSeen(): Promise<number | null>;
}

export interface WorkerWatchOptions {
  /** The workers' lease: they beat every third of it, and one unseen for a whole lease (plus a poll) counts as gone. */
  leaseMs: number;
  pollMs: number;
  code: WorkerAbsence['code'];
  /** What waits, singular ("scoring job"). */
  work: string;
  /** The readiness note's sentence after "No … worker seen for N s while M <work> wait:". */
  consequence: string;
  log: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };
  clock?: () => number;
}

/**
 * Notices, in an API process, that work of one kind waits while no worker of that kind has looked
 * for work within the threshold (`serve --no-worker` with no `stampgate worker` running, a worker
 * without the key a push needs, or every worker stuck): the work would wait without a word. One
 * warning per such episode, one line when it ends, and the note `absence` for the readiness answer
 * meanwhile.
 */
export class WorkerWatch {
  readonly #probe: WorkerProbe;
  readonly #options: WorkerWatchOptions;
  readonly #clock: () => number;
  #timer: NodeJS.Timeout | null = null;
  #startedAt = 0;
  #checking = false;
  #absence: WorkerAbsence | null = null;

  constructor(probe: WorkerProbe, options: WorkerWatchOptions) {
    this.#probe = probe;
    this.#options = options;
    this.#clock = options.clock ?? Date.now;
  }

  /** How long no worker may be seen while work waits: beats come a third of a lease apart, at the loop's next pass. */
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
      const waiting = await this.#probe.waiting(now);
      const lastSeen = waiting === 0 ? null : await this.#probe.lastSeen();
      // A worker never seen is unseen since this process began to look: no warning at start-up.
      const unseenSince = lastSeen ?? this.#startedAt;
      if (waiting > 0 && now - unseenSince >= this.thresholdMs) this.#enter(now, unseenSince, lastSeen, waiting);
      else this.#leave(waiting);
    } catch {
      // The database's availability tracker logs an outage; the next look tries again.
    } finally {
      this.#checking = false;
    }
  }

  get #kind(): string {
    return this.#options.code === 'no_push_worker' ? 'push' : 'scoring';
  }

  #enter(now: number, unseenSince: number, lastSeen: number | null, waiting: number): void {
    const seconds = Math.round((now - unseenSince) / 1000);
    const { work } = this.#options;
    const detail = `No ${this.#kind} worker seen for ${seconds} s while ${waiting} ${work}(s) wait: ${this.#options.consequence}`;
    const starting = this.#absence === null;
    this.#absence = { code: this.#options.code, detail };
    if (starting) {
      this.#options.log.warn(
        { waitingJobs: waiting, unseenForSeconds: seconds, lastWorkerSeenAt: lastSeen === null ? null : new Date(lastSeen).toISOString() },
        `no ${this.#kind} worker seen for ${seconds} s while ${waiting} ${work}(s) wait`,
      );
    }
  }

  #leave(waiting: number): void {
    if (this.#absence === null) return;
    this.#absence = null;
    this.#options.log.info({ waitingJobs: waiting }, waiting === 0 ? `no ${this.#options.work} waits any more` : `a ${this.#kind} worker is seen again`);
  }
}
