import { setTimeout as sleep } from 'node:timers/promises';

/**
 * SIGTERM/SIGINT for a long-running command. From the moment it is made until `finish`, a timer
 * keeps the event loop alive: a command that awaits `received` lives until a signal by
 * construction, not because some socket or pool happens to hold the loop open (on SQLite with
 * no HTTP port nothing else would, and Node would end the process with an unsettled promise).
 */
export class ShutdownSignal {
  readonly received: Promise<NodeJS.Signals>;
  readonly #controller = new AbortController();
  readonly #keepAlive: NodeJS.Timeout;
  readonly #onSignal: (signal: NodeJS.Signals) => void;

  constructor() {
    let resolve!: (signal: NodeJS.Signals) => void;
    this.received = new Promise((r) => (resolve = r));
    this.#onSignal = (signal) => {
      this.#controller.abort();
      resolve(signal);
    };
    process.once('SIGTERM', this.#onSignal);
    process.once('SIGINT', this.#onSignal);
    this.#keepAlive = setInterval(() => {}, 1 << 30);
  }

  /** Aborted when the signal arrives (to end waits such as the start-up's wait for the database). */
  get aborted(): AbortSignal {
    return this.#controller.signal;
  }

  /** After a signal: runs `cleanup`, exiting with code 1 if it takes longer than `limitMs`. */
  async shutDown(cleanup: () => Promise<void>, limitMs: number): Promise<void> {
    const forced = setTimeout(() => process.exit(1), limitMs);
    forced.unref();
    try {
      await cleanup();
    } finally {
      clearTimeout(forced);
      this.finish();
    }
  }

  /** Stops holding the process open and listening for the signals (also when start-up failed). */
  finish(): void {
    clearInterval(this.#keepAlive);
    process.off('SIGTERM', this.#onSignal);
    process.off('SIGINT', this.#onSignal);
  }
}

/** Resolves after `ms`, or at once (false) when `signal` is aborted. */
export async function pause(ms: number, signal: AbortSignal): Promise<boolean> {
  try {
    await sleep(ms, undefined, { signal });
    return true;
  } catch {
    return false;
  }
}
