import { type FSWatcher, watch } from 'node:fs';
import { basename, dirname } from 'node:path';

/**
 * How long after the last change of the database files every look asks SQLite again: far longer
 * than a commit takes between its last WAL write and its WAL index update, short enough that
 * this process's own periodic writes (usage counters every 5 s) leave most looks free.
 */
const settleMs = 250;

/**
 * Other processes' commits to a SQLite database, seen without a query per look: the file system
 * tells (inotify on the database's folder) when the database or its WAL is written, and only
 * then, and for a quarter of a second after, does a look ask SQLite whether another connection committed
 * (`PRAGMA data_version`, a read transaction's start: about 20 µs, more than the rest of a cached
 * read). That delay covers a commit whose last WAL write was noticed before its WAL index was
 * updated (that update is a memory write the file system does not report).
 *
 * `generation()` follows the bus transports' contract: null while it cannot tell (the watch
 * failed: every look then reads the database), otherwise a number that changes when another
 * connection committed.
 */
export class SqliteWriteWatch {
  readonly #writesElsewhere: () => number;
  readonly #clock: () => number;
  #watcher: FSWatcher | null = null;
  #failed = false;
  #version: number;
  #generation = 0;
  #askUntil = 0;

  constructor(file: string, writesElsewhere: () => number, clock: () => number = Date.now) {
    this.#writesElsewhere = writesElsewhere;
    this.#clock = clock;
    this.#version = writesElsewhere();
    const names = new Set([basename(file), `${basename(file)}-wal`]);
    try {
      this.#watcher = watch(dirname(file), { persistent: false }, (_event, name) => {
        if (name === null || names.has(String(name))) this.#askUntil = this.#clock() + settleMs;
      });
      this.#watcher.on('error', () => this.#fail());
    } catch {
      this.#fail();
    }
  }

  generation(): number | null {
    if (this.#failed) return null;
    if (this.#askUntil >= this.#clock()) {
      const version = this.#writesElsewhere();
      if (version !== this.#version) {
        this.#version = version;
        this.#generation += 1;
      }
    }
    return this.#generation;
  }

  close(): void {
    this.#watcher?.close();
    this.#watcher = null;
  }

  #fail(): void {
    this.#failed = true;
    this.close();
  }
}
