import { Redis } from 'ioredis';
import type { BusTransport } from '../events/bus.js';

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

const channel = 'stampgate:invalidate';

/**
 * The bus transport over Redis pub/sub: every message to every process, the sender included (in
 * the order Redis took them: the bus's peers rely on it).
 */
export function redisTransport(redisUrl: string, watch: RedisWatch): BusTransport {
  const receivers: ((message: string) => void)[] = [];
  const connected: (() => void)[] = [];
  const publisher = connectRedis(redisUrl, watch);
  // A short-lived CLI command (`keys revoke`, `data import`) publishes right after start, before
  // its connection is up; without the offline queue that notice would be dropped. So the first
  // connection is waited for, briefly; after an outage publishing fails fast instead.
  const firstConnection = new Promise<void>((resolve) => {
    publisher.once('ready', () => resolve());
    setTimeout(resolve, 2000).unref();
  });
  let subscriber: Redis | null = null;
  // Bumped at every acknowledged (re)subscription: messages published while the subscriber was away are gone.
  let subscriptions = 0;
  let subscribed = false;
  return {
    async send(messages) {
      try {
        await firstConnection;
        // One round trip; Redis runs a pipeline's commands in order.
        const pipeline = publisher.pipeline();
        for (const message of messages) pipeline.publish(channel, message);
        const results = (await pipeline.exec()) ?? [];
        const failed = results.find(([error]) => error);
        if (failed) throw failed[0];
        return true;
      } catch (error) {
        watch.lost(error as Error);
        return false;
      }
    },
    receive(handler) {
      receivers.push(handler);
      if (subscriber) return;
      // Subscribed by hand at every (re)connection: a cache may trust the bus only once Redis has
      // acknowledged the SUBSCRIBE (ioredis's own resubscription reports ready before it is sent).
      const client = new Redis(redisUrl, { retryStrategy: (attempt) => Math.min(attempt * 200, 2000), maxRetriesPerRequest: null, autoResubscribe: false });
      subscriber = client;
      client.on('error', (error: Error) => watch.lost(error));
      client.on('ready', () => {
        watch.back();
        client.subscribe(channel).then(
          () => {
            if (client.status !== 'ready') return;
            subscriptions += 1;
            subscribed = true;
            for (const handler of connected) handler();
          },
          (error: Error) => watch.lost(error),
        );
      });
      client.on('close', () => {
        subscribed = false;
      });
      client.on('message', (_channel: string, text: string) => {
        for (const receiver of receivers) receiver(text);
      });
    },
    generation() {
      return subscribed && subscriber?.status === 'ready' && publisher.status === 'ready' ? subscriptions : null;
    },
    onConnected(handler) {
      connected.push(handler);
    },
    async close() {
      publisher.disconnect();
      subscriber?.disconnect();
    },
  };
}
