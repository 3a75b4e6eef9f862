import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import type { BusTransport } from '../events/bus.js';
import type { Database } from './connection.js';

interface NoticeLog {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

const firstRetryMs = 500;
const notifyRetriesMs = [20, 100, 400];
const longestRetryMs = 5000;

/**
 * PostgreSQL LISTEN/NOTIFY between the processes of one database: one dedicated listening
 * connection per process, reconnected with backoff when it drops, carrying several topics
 * (scoring-job wake-ups, the process bus). Channels are per schema, so that databases shared
 * by several schemas (tests) stay apart. A process hears its own notices only on the topics
 * that ask for them (job wake-ups it delivers itself, at once).
 *
 * `generation` tells a cache whether it can trust what it has not heard: null while not
 * listening (notices sent meanwhile are lost), and a new number after every (re)connection.
 */
export class PostgresNotices {
  readonly #database: Database;
  readonly #log: NoticeLog;
  readonly #self = randomUUID();
  readonly #handlers = new Map<string, ((payload: string) => void)[]>();
  /** Topics whose handlers hear this process's own notices too (the bus: its peers need them back). */
  readonly #withOwn = new Set<string>();
  readonly #restored: (() => void)[] = [];
  #client: pg.Client | null = null;
  #closed = false;
  #listening = false;
  #generation = 0;
  #retryMs = firstRetryMs;
  #retryTimer: NodeJS.Timeout | null = null;
  #lostAt: number | null = null;
  #started: Promise<void> | null = null;
  // channel → topic, of the connection now listening
  #channels = new Map<string, string>();
  #schema = 'public';

  constructor(database: Database, log: NoticeLog) {
    this.#database = database;
    this.#log = log;
  }

  /** Null while notices from other processes cannot arrive; changes whenever some may have been missed. */
  get generation(): number | null {
    return this.#listening ? this.#generation : null;
  }

  /** Hears `topic` from the other processes (and from this one too with `own`). */
  on(topic: string, handler: (payload: string) => void, own = false): void {
    if (own) this.#withOwn.add(topic);
    const list = this.#handlers.get(topic);
    if (list) {
      list.push(handler);
      return;
    }
    this.#handlers.set(topic, [handler]);
    const client = this.#client;
    if (client && this.#listening) {
      const channel = channelOf(topic, this.#schema);
      this.#channels.set(channel, topic);
      client.query(`listen "${channel}"`).catch((error: unknown) => client.emit('error', error));
    }
  }

  /** Runs after every (re)connection: what was sent meanwhile is gone, so look again. */
  onRestored(handler: () => void): void {
    this.#restored.push(handler);
  }

  /** Sends `payload` on `topic` to every other process (after the statement commits). */
  async notify(topic: string, payload: string): Promise<void> {
    await this.notifyAll(topic, [payload]);
  }

  /** Sends each payload on `topic`, in order, in one statement (one notice each, delivered in order at its commit). */
  async notifyAll(topic: string, payloads: readonly string[]): Promise<void> {
    // Cut to 63 characters as the listener's channel is (PostgreSQL refuses longer channel names).
    const sent = payloads.map((payload) => `${this.#self} ${payload}`);
    await sql`select pg_notify(left(${`stampgate_${topic}_`} || current_schema(), 63), p) from unnest(${sent}::text[]) as p`.execute(this.#database.db);
  }

  /** Starts hearing other processes; resolves after the first attempt, whether it connected or will try again. */
  listen(): Promise<void> {
    this.#started ??= this.#connect();
    return this.#started;
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#listening = false;
    if (this.#retryTimer) clearTimeout(this.#retryTimer);
    const client = this.#client;
    this.#client = null;
    await client?.end().catch(() => {});
  }

  #lost(error: unknown): void {
    this.#listening = false;
    if (this.#closed || this.#retryTimer) return;
    if (this.#lostAt === null) {
      this.#lostAt = Date.now();
      this.#log.warn({ err: (error as Error)?.message }, 'notices from other processes lost (job wake-ups, cache invalidations); polling and no score cache until the connection is back');
    }
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = null;
      void this.#connect();
    }, this.#retryMs);
    this.#retryTimer.unref();
    this.#retryMs = Math.min(this.#retryMs * 2, longestRetryMs);
  }

  async #connect(): Promise<void> {
    if (this.#closed) return;
    // Keepalive probes from 10 s of silence: a peer gone without a word (a network partition) is
    // noticed, and the cache stops trusting the bus, in tens of seconds rather than hours.
    const client = new pg.Client({ connectionString: this.#database.url, connectionTimeoutMillis: 5000, keepAlive: true, keepAliveInitialDelayMillis: 10_000 });
    this.#client = client;
    // Every fault of this connection ends here: never an unhandled 'error' event.
    client.on('error', (error) => {
      client.end().catch(() => {});
      if (this.#client === client) this.#lost(error);
    });
    client.on('end', () => {
      if (this.#client === client) this.#lost(new Error('connection ended'));
    });
    client.on('notification', (message) => this.#deliver(message.channel, message.payload ?? ''));
    try {
      await client.connect();
      const { rows } = await client.query<{ schema: string }>('select current_schema() as schema');
      const schema = rows[0]?.schema ?? 'public';
      this.#schema = schema;
      for (const topic of this.#handlers.keys()) await client.query(`listen "${channelOf(topic, schema)}"`);
      if (this.#closed || this.#client !== client) {
        await client.end().catch(() => {});
        return;
      }
      this.#channels = new Map([...this.#handlers.keys()].map((topic) => [channelOf(topic, schema), topic]));
      this.#generation += 1;
      this.#listening = true;
      this.#retryMs = firstRetryMs;
      if (this.#lostAt !== null) {
        this.#log.info({ outageMs: Date.now() - this.#lostAt }, 'notices from other processes restored');
        this.#lostAt = null;
      }
      for (const restored of this.#restored) restored();
    } catch (error) {
      client.end().catch(() => {});
      if (this.#client === client) this.#lost(error);
    }
  }

  #deliver(channel: string, text: string): void {
    const topic = this.#channels.get(channel);
    const space = text.indexOf(' ');
    if (topic === undefined || space < 0 || (text.slice(0, space) === this.#self && !this.#withOwn.has(topic))) return;
    const payload = text.slice(space + 1);
    for (const handler of this.#handlers.get(topic) ?? []) handler(payload);
  }
}

const channelOf = (topic: string, schema: string) => `stampgate_${topic}_${schema}`.slice(0, 63);

/**
 * The process bus over LISTEN/NOTIFY (PostgreSQL without REDIS_URL): every message to every
 * process, the sender included, in commit order (the bus's peers rely on it).
 */
export function postgresBusTransport(notices: PostgresNotices, database: Database): BusTransport {
  const receivers: ((message: string) => void)[] = [];
  return {
    async send(messages) {
      // A notice that cannot be sent (no pooled connection free in time, the connection lost
      // after the write) is tried again a few times: until it goes, other processes may answer
      // from memory what the write replaced (bounded by SCORE_CACHE_TTL_MS).
      for (let attempt = 0; ; attempt++) {
        try {
          await notices.notifyAll('bus', messages);
          return true;
        } catch (error) {
          database.availability.observe(error);
          if (attempt >= notifyRetriesMs.length) return false;
          await new Promise((resolve) => setTimeout(resolve, notifyRetriesMs[attempt]));
        }
      }
    },
    receive(handler) {
      if (receivers.length === 0) notices.on('bus', (message) => receivers.forEach((receiver) => receiver(message)), true);
      receivers.push(handler);
    },
    generation: () => notices.generation,
    onConnected: (handler) => notices.onRestored(handler),
    close: () => notices.close(),
  };
}
