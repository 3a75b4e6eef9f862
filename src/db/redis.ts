import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';

export type RedisClient = Redis;

interface WatchLog {
  warn(obj: object, msg: string): void;
  info(obj: object | string, msg?: string): void;
}

/**
 * Whether this process reaches Redis, shared by all its Redis clients (rate-limit counts, the
 * process bus): one warning when Redis is lost, whoever notices first, and one line when it is back,
 * instead of one per failed command or reconnection attempt.
 */
export class RedisWatch {
  #lostAt: number | null = null;
  constructor(readonly log: WatchLog) {}

  lost(error: Error): void {
    if (this.#lostAt !== null) return;
    this.#lostAt = Date.now();
    this.log.warn(
      { err: error?.message },
      'Redis is unreachable: rate limits are counted per process and notices between processes are not delivered until it returns',
    );
  }

  back(): void {
    if (this.#lostAt === null) return;
    const outageMs = Date.now() - this.#lostAt;
    this.#lostAt = null;
    this.log.info({ outageMs }, 'Redis is reachable again: rate limits are shared across processes again');
  }
}

/**
 * A Redis client that never makes a request wait for Redis: commands fail at
 * once while it is disconnected (no offline queue) or after a short timeout,
 * and it keeps reconnecting in the background.
 */
export function connectRedis(url: string, watch: RedisWatch): Redis {
  const client = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: 250,
    connectTimeout: 2000,
    lazyConnect: false,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
  });
  client.on('error', (error: Error) => watch.lost(error));
  client.on('ready', () => watch.back());
  return client;
}

export type BusTopic = 'api_key' | 'scorer' | 'issuers' | 'public_data';

export interface ProcessBus {
  /** Tells every process (this one included) about `topic`/`key`: changed data, a queued or settled job. */
  publish(topic: BusTopic, key: string): Promise<void>;
  subscribe(handler: (topic: BusTopic, key: string) => void): void;
  close(): Promise<void>;
}

const channel = 'stampgate:invalidate';

/**
 * Notices between processes over Redis pub/sub: cached data that changed. Without Redis only this
 * process hears them (the caches' TTLs bound staleness elsewhere). Scoring jobs do not travel
 * here but through the database (see job-signals.ts), so that Redis is never needed to score.
 */
export function processBus(redisUrl: string | null, watch: RedisWatch): ProcessBus {
  const handlers: ((topic: BusTopic, key: string) => void)[] = [];
  const deliver = (topic: BusTopic, key: string) => {
    for (const handler of handlers) handler(topic, key);
  };
  if (!redisUrl) {
    return {
      publish: async (topic, key) => deliver(topic, key),
      subscribe: (handler) => void handlers.push(handler),
      close: async () => {},
    };
  }
  // Each bus has its own id: it has already delivered its own messages locally.
  const busId = randomUUID();
  const publisher = connectRedis(redisUrl, watch);
  // A short-lived CLI command (`keys revoke`, `data import`) publishes right after start, before
  // its connection is up; without the offline queue that notice would be dropped. So the first
  // connection is waited for, briefly; after an outage publishing fails fast instead.
  const firstConnection = new Promise<void>((resolve) => {
    publisher.once('ready', () => resolve());
    setTimeout(resolve, 2000).unref();
  });
  let subscriber: Redis | null = null;
  return {
    async publish(topic, key) {
      deliver(topic, key);
      try {
        await firstConnection;
        await publisher.publish(channel, JSON.stringify({ topic, key, from: busId }));
      } catch (error) {
        watch.lost(error as Error);
      }
    },
    subscribe(handler) {
      handlers.push(handler);
      if (subscriber) return;
      // A subscribed connection may queue its SUBSCRIBE until Redis is reachable.
      subscriber = new Redis(redisUrl, { retryStrategy: (attempt) => Math.min(attempt * 200, 2000), maxRetriesPerRequest: null });
      subscriber.on('error', (error: Error) => watch.lost(error));
      subscriber.on('ready', () => watch.back());
      subscriber.on('message', (_channel: string, message: string) => {
        try {
          const { topic, key, from } = JSON.parse(message) as { topic: BusTopic; key: string; from: string };
          if (from !== busId) deliver(topic, key);
        } catch {
          // Not one of ours; ignore.
        }
      });
      void subscriber.subscribe(channel).catch((error: Error) => watch.lost(error));
    },
    async close() {
      publisher.disconnect();
      subscriber?.disconnect();
    },
  };
}
