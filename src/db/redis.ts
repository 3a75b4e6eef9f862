import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';

export type RedisClient = Redis;

/**
 * A Redis client that never makes a request wait for Redis: commands fail at
 * once while it is disconnected (no offline queue) or after a short timeout,
 * and it keeps reconnecting in the background.
 */
export function connectRedis(url: string, onError: (error: Error) => void): Redis {
  const client = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: 250,
    connectTimeout: 2000,
    lazyConnect: false,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
  });
  client.on('error', onError);
  return client;
}

export type BusTopic = 'api_key' | 'scorer' | 'issuers' | 'public_data' | 'scoring_job' | 'score_settled';

export interface ProcessBus {
  /** Tells every process (this one included) about `topic`/`key`: changed data, a queued or settled job. */
  publish(topic: BusTopic, key: string): Promise<void>;
  subscribe(handler: (topic: BusTopic, key: string) => void): void;
  close(): Promise<void>;
}

const channel = 'stampgate:invalidate';

/**
 * Notices between processes over Redis pub/sub: cached data that changed, and scoring jobs
 * queued for the workers. Without Redis only this process hears them (the caches' TTLs bound
 * staleness elsewhere, and workers find jobs at their next poll).
 */
export function processBus(redisUrl: string | null, onError: (error: Error) => void): ProcessBus {
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
  const publisher = connectRedis(redisUrl, onError);
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
        onError(error as Error);
      }
    },
    subscribe(handler) {
      handlers.push(handler);
      if (subscriber) return;
      // A subscribed connection may queue its SUBSCRIBE until Redis is reachable.
      subscriber = new Redis(redisUrl, { retryStrategy: (attempt) => Math.min(attempt * 200, 2000), maxRetriesPerRequest: null });
      subscriber.on('error', onError);
      subscriber.on('message', (_channel: string, message: string) => {
        try {
          const { topic, key, from } = JSON.parse(message) as { topic: BusTopic; key: string; from: string };
          if (from !== busId) deliver(topic, key);
        } catch {
          // Not one of ours; ignore.
        }
      });
      void subscriber.subscribe(channel).catch(onError);
    },
    async close() {
      publisher.disconnect();
      subscriber?.disconnect();
    },
  };
}
