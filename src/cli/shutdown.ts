import { setTimeout as sleep } from 'node:timers/promises';

/** What ends a long-running command: a signal, or the package runner that started it going away. */
export type ShutdownCause = NodeJS.Signals | 'parent exited';

/** How often a command started by a package runner checks that the runner is still there. */
const parentCheckMs = 250;

/**
 * True when `npm start`, `npm run …` or `npx` started this process (npm sets
 * npm_lifecycle_event for both). Between npm and this process sits a shell (`sh -c …`) that
 * npm forwards SIGTERM/SIGINT to; dash dies of the signal without passing it on, which would
 * leave this process running, reparented, with its ports bound. Only such a process watches its
 * parent: one started from a login shell with nohup or `&` must outlive that shell.
 */
export function startedByPackageRunner(env: NodeJS.ProcessEnv): boolean {
  return typeof env.npm_lifecycle_event === 'string' && env.npm_lifecycle_event !== '';
}

/**
 * SIGTERM/SIGINT for a long-running command. From the moment it is made until `finish`, a timer
 * keeps the event loop alive: a command that awaits `received` lives until a signal by
 * construction, not because some socket or pool happens to hold the loop open (on SQLite with
 * no HTTP port nothing else would, and Node would end the process with an unsettled promise).
 * With `watchParent`, the parent process exiting counts as SIGTERM (see startedByPackageRunner).
 */
export class ShutdownSignal {
  readonly received: Promise<ShutdownCause>;
  readonly #controller = new AbortController();
  readonly #keepAlive: NodeJS.Timeout;
  readonly #parentWatch: NodeJS.Timeout | null = null;
  readonly #onSignal: (cause: ShutdownCause) => void;

  constructor(options: { watchParent?: boolean } = {}) {
    let resolve!: (cause: ShutdownCause) => void;
    this.received = new Promise((r) => (resolve = r));
    this.#onSignal = (cause) => {
      this.#stopWatchingParent();
      this.#controller.abort();
      resolve(cause);
    };
    process.once('SIGTERM', this.#onSignal);
    process.once('SIGINT', this.#onSignal);
    this.#keepAlive = setInterval(() => {}, 1 << 30);
    if (options.watchParent) {
      // An orphan is adopted by init or a subreaper: its parent id changes.
      const parent = process.ppid;
      this.#parentWatch = setInterval(() => {
        if (process.ppid !== parent) this.#onSignal('parent exited');
      }, parentCheckMs);
      this.#parentWatch.unref();
    }
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
    this.#stopWatchingParent();
    process.off('SIGTERM', this.#onSignal);
    process.off('SIGINT', this.#onSignal);
  }

  #stopWatchingParent(): void {
    if (this.#parentWatch) clearInterval(this.#parentWatch);
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
