export interface PollingLoopOptions {
  /** How long an idle loop waits before it looks again by itself. */
  pollMs: number;
  /**
   * `restart`: the poll timer starts again after every pass (a loop looks `pollMs` after its last
   * look). `keep`: a poll already pending is kept, so a loop woken all the time (attempts
   * finishing) still makes its timed pass every `pollMs`.
   */
  timer: 'restart' | 'keep';
  /** What the poll timer does (default: wake the loop); a worker may note why it woke first. */
  onPoll?: () => void;
  /** Told of an error a pass threw; the loop then waits for its next wake-up or poll. */
  onError: (error: unknown) => void;
}

/**
 * The one wake-up mechanism of the background workers (scoring jobs, batch chunks, webhook
 * deliveries): `wake()` runs a pass now, or, while one runs, once more after it (wake-ups during a
 * pass coalesce into one); after the passes the poll timer is set, so work that arrived unheard
 * (another process, a missed notice) is found within `pollMs`. The timer never keeps the process
 * alive. `stop()` ends the loop and waits for the pass under way.
 */
export class PollingLoop {
  readonly #pass: () => Promise<void>;
  readonly #options: PollingLoopOptions;
  #running = false;
  #timer: NodeJS.Timeout | null = null;
  #pumping: Promise<void> | null = null;
  #again = false;

  constructor(pass: () => Promise<void>, options: PollingLoopOptions) {
    this.#pass = pass;
    this.#options = options;
  }

  get running(): boolean {
    return this.#running;
  }

  /** The passes under way, if any (resolves when they are over). */
  get pumping(): Promise<void> | null {
    return this.#pumping;
  }

  /** Starts the loop with a pass now; false when it was running already. */
  start(): boolean {
    if (this.#running) return false;
    this.#running = true;
    this.wake();
    return true;
  }

  wake(): void {
    if (!this.#running) return;
    if (this.#pumping) {
      this.#again = true;
      return;
    }
    const pumping = this.#passes();
    this.#pumping = pumping;
    void pumping.finally(() => {
      if (this.#pumping === pumping) this.#pumping = null;
      this.#schedulePoll();
    });
  }

  /** Stops the loop (no more passes, no poll) and waits for the pass under way. */
  async stop(): Promise<void> {
    this.#running = false;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    await this.#pumping;
  }

  async #passes(): Promise<void> {
    try {
      do {
        this.#again = false;
        await this.#pass();
      } while (this.#again && this.#running);
    } catch (error) {
      this.#options.onError(error);
    }
  }

  #schedulePoll(): void {
    if (!this.#running) return;
    const poll = this.#options.onPoll ?? (() => this.wake());
    if (this.#options.timer === 'keep') {
      if (this.#timer) return;
      this.#timer = setTimeout(() => {
        this.#timer = null;
        poll();
      }, this.#options.pollMs);
    } else {
      if (this.#timer) clearTimeout(this.#timer);
      this.#timer = setTimeout(poll, this.#options.pollMs);
    }
    this.#timer.unref();
  }
}
