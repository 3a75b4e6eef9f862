import { EventEmitter } from 'node:events';
import type { Database } from './connection.js';
import type { PostgresNotices } from './pg-notices.js';

export type JobSignal = { kind: 'queued' } | { kind: 'settled'; scorerId: number; address: string };

export interface JobSignals {
  /** Tells the workers of every process that a job was queued. */
  queued(): void;
  /** Tells every process that the job of `scorerId`/`address` settled (waiting submissions answer). */
  settled(scorerId: number, address: string): void;
  on(handler: (signal: JobSignal) => void): void;
  /**
   * Starts hearing other processes (long-running commands; in-process delivery needs no start).
   * Resolves after the first attempt, whether it connected or will try again.
   */
  listen(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Scoring-job wake-ups between processes, through the database itself so that scoring never
 * depends on Redis: PostgreSQL LISTEN/NOTIFY (db/pg-notices.ts), and on SQLite nothing beyond
 * this process (workers of other processes find jobs at their next poll, SCORING_POLL_MS, and
 * waiting submissions re-read their score). A signal is always delivered in this process first
 * and at once; a lost notice only delays, never loses, a job, since the queue is the database.
 */
export function jobSignals(database: Database, notices: PostgresNotices | null): JobSignals {
  const local = new EventEmitter().setMaxListeners(0);
  const deliver = (signal: JobSignal) => local.emit('signal', signal);
  if (!notices) {
    return {
      queued: () => deliver({ kind: 'queued' }),
      settled: (scorerId, address) => deliver({ kind: 'settled', scorerId, address }),
      on: (handler) => void local.on('signal', handler),
      listen: async () => {},
      close: async () => {},
    };
  }
  const notify = (payload: string) =>
    // Outages are logged by the database's availability tracker; other processes poll meanwhile.
    void notices.notify('jobs', payload).catch((error: unknown) => database.availability.observe(error));
  notices.on('jobs', (payload) => {
    const [kind, scorerId, address] = payload.split(' ');
    if (kind === 'queued') deliver({ kind: 'queued' });
    else if (kind === 'settled' && scorerId && address) deliver({ kind: 'settled', scorerId: Number(scorerId), address });
  });
  // Notices sent while not listening are gone: look for work now.
  notices.onRestored(() => deliver({ kind: 'queued' }));
  return {
    queued() {
      deliver({ kind: 'queued' });
      notify('queued');
    },
    settled(scorerId, address) {
      deliver({ kind: 'settled', scorerId, address });
      notify(`settled ${scorerId} ${address}`);
    },
    on(handler) {
      local.on('signal', handler);
    },
    listen: () => notices.listen(),
    close: () => notices.close(),
  };
}
