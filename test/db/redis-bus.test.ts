/**
 * The bus over Redis tells caches whether it can hear the other processes: not before Redis has
 * acknowledged the subscription, not while the subscriber is disconnected, and with a new
 * generation after each resubscription (messages sent meanwhile were lost).
 */
import { afterEach, describe, expect, inject, it } from 'vitest';
import { PostgresNotices, postgresBusTransport } from '../../src/db/pg-notices.js';
import { RedisWatch, redisTransport } from '../../src/db/redis.js';
import type { BusTransport } from '../../src/events/bus.js';
import { createTestDatabase, databaseKinds } from '../helpers/databases.js';
import { type PrivateRedis, startPrivateRedis } from '../helpers/private-services.js';

const redisUrl = inject('redisUrl');
const quiet = { warn: () => {}, info: () => {} };

async function waitFor<T>(what: string, probe: () => T | null | undefined | false): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const value = probe();
    if (value !== null && value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe.runIf(redisUrl)('the Redis bus transport', () => {
  const open: BusTransport[] = [];
  let server: PrivateRedis | null = null;
  afterEach(async () => {
    for (const t of open.splice(0)) await t.close();
    await server?.stop();
  });

  it('has a generation only while subscribed, and a new one after a reconnection', async () => {
    // A Redis of this test's own, stopped and started again (the shared one serves other tests).
    server = await startPrivateRedis();
    const listener = redisTransport(server.url, new RedisWatch(quiet));
    const sender = redisTransport(server.url, new RedisWatch(quiet));
    open.push(listener, sender);
    const heard: string[] = [];
    expect(listener.generation()).toBeNull();
    listener.receive((message) => heard.push(message));
    const first = await waitFor('the first subscription', () => listener.generation());

    await sender.send([JSON.stringify({ topic: 'score', key: '1:0xaa' })]);
    await waitFor('the first message', () => heard.length === 1);

    // Redis goes away: the listener cannot vouch for anything until it is back.
    await server.stop();
    await waitFor('the loss', () => listener.generation() === null);
    await server.start();
    const second = await waitFor('the resubscription', () => listener.generation());
    expect(second).toBeGreaterThan(first);

    // Sent until heard: the sender's own connection may come back a moment after the listener's.
    let sends = 0;
    await waitFor('a message after the reconnection', () => {
      if (sends++ % 10 === 0) void sender.send([JSON.stringify({ topic: 'score', key: '1:0xbb' })]);
      return heard.length > 1;
    });
    expect(heard.map((m) => (JSON.parse(m) as { key: string }).key)[0]).toBe('1:0xaa');
    expect(heard.slice(1).every((m) => (JSON.parse(m) as { key: string }).key === '1:0xbb')).toBe(true);
  });
});

/**
 * The bus's peers (src/events/bus-peers.ts) rely on every process hearing every message, its own
 * included, in one order: checked on the real transports, two processes sending at once.
 */
interface OpenedTransports {
  transports: BusTransport[];
  close(): Promise<void>;
  listen?(): Promise<void>;
}
const transports = [
  ...(redisUrl ? [{ name: 'Redis', open: async (): Promise<OpenedTransports> => ({ transports: [redisTransport(redisUrl, new RedisWatch(quiet)), redisTransport(redisUrl, new RedisWatch(quiet))], close: async () => {} }) }] : []),
  ...(databaseKinds.includes('postgres')
    ? [
        {
          name: 'LISTEN/NOTIFY',
          open: async (): Promise<OpenedTransports> => {
            const test = await createTestDatabase('postgres');
            const databases = [test.open(), test.open()];
            const notices = databases.map((database) => new PostgresNotices(database, quiet));
            return {
              transports: databases.map((database, i) => postgresBusTransport(notices[i]!, database)),
              close: async () => {
                for (const database of databases) await database.close();
                await test.drop();
              },
              listen: async () => void (await Promise.all(notices.map((n) => n.listen()))),
            };
          },
        },
      ]
    : []),
];

describe.each(transports)('the $name bus transport', ({ open }) => {
  it('delivers every message to every process, the sender included, in one order', async () => {
    const opened = await open();
    const heard: string[][] = [[], []];
    try {
      opened.transports.forEach((transport, i) => transport.receive((message) => heard[i]!.push(message)));
      await opened.listen?.();
      await waitFor('both hearing', () => opened.transports.every((t) => t.generation() !== null));
      // Sends of one message and of five at once (a batch step's notices), from both processes at once.
      const message = (n: number, part: number) => JSON.stringify({ topic: 'score', key: `1:${n}:${part}`, from: `p${n % 2}` });
      const sent = await Promise.all(
        Array.from({ length: 40 }, (_, n) => opened.transports[n % 2]!.send(n % 4 === 0 ? [0, 1, 2, 3, 4].map((part) => message(n, part)) : [message(n, 0)])),
      );
      expect(sent.every(Boolean)).toBe(true);
      await waitFor('every message twice', () => heard.every((messages) => messages.length === 80));
      expect(heard[0]).toEqual(heard[1]);
      expect(new Set(heard[0]).size).toBe(80);
      // A send's messages arrive in their order, one after the other.
      for (let n = 0; n < 40; n += 4) {
        const first = heard[0]!.indexOf(message(n, 0));
        expect(heard[0]!.slice(first, first + 5)).toEqual([0, 1, 2, 3, 4].map((part) => message(n, part)));
      }
    } finally {
      for (const transport of opened.transports) await transport.close();
      await opened.close();
    }
  });
});
