import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { sql } from 'kysely';
import pg from 'pg';
import type { Database } from './connection.js';

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

interface SignalLog {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

const firstRetryMs = 500;
const longestRetryMs = 5000;

/**
 * Scoring-job wake-ups between processes, through the database itself so that scoring never
 * depends on Redis: PostgreSQL LISTEN/NOTIFY on a dedicated connection (reconnected with backoff
 * when it drops), and on SQLite nothing beyond this process (workers of other processes find jobs
 * at their next poll, SCORING_POLL_MS, and waiting submissions re-read their score). A signal is
 * always delivered in this process first and at once; a lost notice only delays, never loses, a
 * job, since the queue is the database.
 */
export function jobSignals(database: Database, log: SignalLog): JobSignals {
  const local = new EventEmitter().setMaxListeners(0);
  const deliver = (signal: JobSignal) => local.emit('signal', signal);
  if (database.dialect !== 'postgres') {
    return {
      queued: () => deliver({ kind: 'queued' }),
      settled: (scorerId, address) => deliver({ kind: 'settled', scorerId, address }),
      on: (handler) => void local.on('signal', handler),
      listen: async () => {},
      close: async () => {},
    };
  }

  // One channel per schema, so that databases shared by several schemas (tests) stay apart.
  const channelOf = (schema: string) => `stampgate_jobs_${schema}`.slice(0, 63);
  const self = randomUUID();
  const notify = (payload: string) =>
    void sql`select pg_notify('stampgate_jobs_' || current_schema(), ${`${self} ${payload}`})`
      .execute(database.db)
      // Outages are logged by the database's availability tracker; other processes poll meanwhile.
      .catch((error) => database.availability.observe(error));

  let listener: pg.Client | null = null;
  let closed = false;
  let retryMs = firstRetryMs;
  let retryTimer: NodeJS.Timeout | null = null;
  let lostAt: number | null = null;
  let listening = false;

  const scheduleReconnect = (error: unknown) => {
    if (closed || retryTimer) return;
    if (lostAt === null) {
      lostAt = Date.now();
      log.warn({ err: (error as Error)?.message }, 'job notifications from other processes lost; workers poll until the connection is back');
    }
    retryTimer = setTimeout(() => {
      retryTimer = null;
      void listen();
    }, retryMs);
    retryTimer.unref();
    retryMs = Math.min(retryMs * 2, longestRetryMs);
  };

  async function listen(): Promise<void> {
    if (closed) return;
    const client = new pg.Client({ connectionString: database.url, connectionTimeoutMillis: 5000, keepAlive: true });
    listener = client;
    // Every fault of this connection ends here: never an unhandled 'error' event.
    client.on('error', (error) => {
      client.end().catch(() => {});
      scheduleReconnect(error);
    });
    client.on('end', () => {
      if (listener === client) scheduleReconnect(new Error('connection ended'));
    });
    client.on('notification', (message) => {
      const payload = message.payload ?? '';
      const [from, kind, scorerId, address] = payload.split(' ');
      if (from === self) return;
      if (kind === 'queued') deliver({ kind: 'queued' });
      else if (kind === 'settled' && scorerId && address) deliver({ kind: 'settled', scorerId: Number(scorerId), address });
    });
    try {
      await client.connect();
      const { rows } = await client.query<{ schema: string }>('select current_schema() as schema');
      await client.query(`listen "${channelOf(rows[0]?.schema ?? 'public')}"`);
      if (closed) {
        await client.end().catch(() => {});
        return;
      }
      listening = true;
      retryMs = firstRetryMs;
      if (lostAt !== null) {
        log.info({ outageMs: Date.now() - lostAt }, 'job notifications from other processes restored');
        lostAt = null;
      }
      // Notices sent while not listening are gone: look for work now.
      deliver({ kind: 'queued' });
    } catch (error) {
      listening = false;
      client.end().catch(() => {});
      scheduleReconnect(error);
    }
  }

  let started: Promise<void> | null = null;
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
    listen() {
      started ??= listen();
      return started;
    },
    async close() {
      closed = true;
      if (retryTimer) clearTimeout(retryTimer);
      const client = listener;
      listener = null;
      if (client && listening) await client.end().catch(() => {});
      else client?.end().catch(() => {});
    },
  };
}
