import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type SqliteDatabase from 'better-sqlite3';
import type { AvailabilityLog } from './availability.js';

/** How often the thread checkpoints: the WAL holds at most this long's writes beyond what readers pin. */
const CHECKPOINT_EVERY_MS = 100;
/** SQLite's own default, restored on the writing connection when the thread is gone. */
const AUTOCHECKPOINT_PAGES = 1000;

// The thread's code, evaluated as CommonJS (no TypeScript loader is needed inside a worker thread,
// in the built server and under the test runner alike). A PASSIVE checkpoint copies what it can
// without waiting for, or blocking, any reader or writer; a busy one (another process's thread
// is checkpointing) is just tried again at the next turn.
const THREAD = `
const { workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file, { fileMustExist: true });
const turn = () => {
  db.pragma('wal_checkpoint(PASSIVE)');
  setTimeout(turn, workerData.everyMs);
};
turn();
`;

/**
 * WAL checkpoints of a long-running process's SQLite database, moved off its event loop. SQLite
 * checkpoints in the connection that commits, once the WAL passes 1 000 pages: that commit then
 * copies every page written since into the database file and syncs both files, about 15 ms of a
 * batch step's 60 on a large database, and the occasional slow commit of a request. Here the
 * writing connection never checkpoints (`wal_autocheckpoint = 0`) and a worker thread with a
 * connection of its own checkpoints every CHECKPOINT_EVERY_MS on the other core. Should the
 * thread fail, the writing connection checkpoints as SQLite does by default again, so the WAL
 * never grows unbounded.
 */
export class SqliteCheckpoints {
  readonly #worker: Worker;
  #ended = false;

  constructor(
    sqlite: SqliteDatabase.Database,
    file: string,
    log: AvailabilityLog,
    // Which driver the thread loads: the one this process uses (a test points it elsewhere to make the thread fail).
    driver: string = createRequire(import.meta.url).resolve('better-sqlite3'),
  ) {
    sqlite.pragma('wal_autocheckpoint = 0');
    this.#worker = new Worker(THREAD, { eval: true, workerData: { file, driver, everyMs: CHECKPOINT_EVERY_MS } });
    this.#worker.unref();
    const fallBack = (error: unknown) => {
      if (this.#ended) return;
      this.#ended = true;
      if (sqlite.open) sqlite.pragma(`wal_autocheckpoint = ${AUTOCHECKPOINT_PAGES}`);
      log.warn({ err: error }, 'The SQLite checkpoint thread stopped; commits checkpoint the WAL themselves from now on.');
    };
    this.#worker.on('error', fallBack);
    this.#worker.on('exit', (code) => fallBack(new Error(`the thread exited with code ${code}`)));
  }

  /** Whether the thread still checkpoints (false once it failed and commits checkpoint again). */
  get running(): boolean {
    return !this.#ended;
  }

  async stop(): Promise<void> {
    if (this.#ended) return;
    this.#ended = true;
    await this.#worker.terminate();
  }
}
