import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { describe, expect, inject, it } from 'vitest';
import { resilientRateLimitStore, WindowCounters } from '../../src/http/rate-limit-store.js';

const redisUrl = inject('redisUrl');

describe('WindowCounters (the per-process rate-limit store)', () => {
  it('counts hits per key within a window and reports the time left', () => {
    const counters = new WindowCounters();
    expect(counters.incr('a', 1000, 10_000)).toEqual({ current: 1, ttl: 1000 });
    expect(counters.incr('a', 1000, 10_400)).toEqual({ current: 2, ttl: 600 });
    expect(counters.incr('b', 1000, 10_400)).toEqual({ current: 1, ttl: 1000 });
    expect(counters.incr('a', 1000, 10_999)).toEqual({ current: 3, ttl: 1 });
    expect(counters.size).toBe(2);
  });

  it('starts a new window once the old one has ended (the end itself included)', () => {
    const counters = new WindowCounters();
    counters.incr('a', 1000, 0);
    counters.incr('a', 1000, 500);
    expect(counters.incr('a', 1000, 1000)).toEqual({ current: 1, ttl: 1000 });
    expect(counters.incr('a', 1000, 1999)).toEqual({ current: 2, ttl: 1 });
  });

  it('drops ended windows in time order, whatever the order of keys and window lengths', () => {
    const counters = new WindowCounters();
    // Windows of different lengths interleaved, so that insertion order is not expiry order.
    for (let i = 0; i < 1000; i++) counters.incr(`k${i}`, i % 2 === 0 ? 5000 : 100 + i, 0);
    expect(counters.size).toBe(1000);
    counters.expire(599);
    // Odd i with 100 + i <= 599: i = 1, 3, …, 499 (250 keys) have ended.
    expect(counters.size).toBe(750);
    for (let i = 1; i < 1000; i += 2) {
      // An ended window restarts at 1; an open one counts on.
      expect(counters.incr(`k${i}`, 100 + i, 599).current).toBe(100 + i <= 599 ? 1 : 2);
    }
    counters.expire(4999);
    expect(counters.size).toBe(500);
    counters.expire(5000);
    expect(counters.size).toBe(0);
  });

  it('agrees with a plain model on random traffic', () => {
    const counters = new WindowCounters();
    const model = new Map<string, { current: number; resetAt: number }>();
    let seed = 12345;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    let now = 0;
    for (let step = 0; step < 20_000; step++) {
      now += random(20);
      const key = `k${random(300)}`;
      const windowMs = [50, 200, 1000][random(3)]!;
      let entry = model.get(key);
      if (!entry || entry.resetAt <= now) {
        entry = { current: 0, resetAt: now + windowMs };
        model.set(key, entry);
      }
      entry.current += 1;
      expect(counters.incr(key, windowMs, now)).toEqual({ current: entry.current, ttl: entry.resetAt - now });
      if (step % 1000 === 0) {
        expect(counters.size).toBe([...model.values()].filter((e) => e.resetAt > now).length);
      }
    }
  });

  it('counts per key through the store interface without Redis', async () => {
    const Store = resilientRateLimitStore(null, null);
    const store = new Store();
    const incr = (key: string) =>
      new Promise<{ current: number; ttl: number }>((resolve, reject) =>
        store.incr(key, (error, result) => (error || !result ? reject(error) : resolve(result)), 60_000),
      );
    expect((await incr('ip:1')).current).toBe(1);
    expect((await incr('ip:1')).current).toBe(2);
    const other = await incr('ip:2');
    expect(other.current).toBe(1);
    expect(other.ttl).toBeGreaterThan(59_000);
  });
});

describe('several budgets at once (a key\'s and its account\'s)', () => {
  it('charges units to every budget only when they fit in each, per process', () => {
    const counters = new WindowCounters();
    expect(counters.incrAllWithin(['key', 'account'], 3, [5, 10], 1000, 0)).toEqual({ counts: [{ current: 3, ttl: 1000 }, { current: 3, ttl: 1000 }], added: true });
    // Fits the account, not the key: nothing anywhere.
    expect(counters.incrAllWithin(['key', 'account'], 3, [5, 10], 1000, 100)).toEqual({ counts: [{ current: 3, ttl: 900 }, { current: 3, ttl: 900 }], added: false });
    expect(counters.incrAllWithin(['other', 'account'], 7, [125, 10], 1000, 200)).toMatchObject({ added: true, counts: [{ current: 7 }, { current: 10 }] });
    expect(counters.incrAllWithin(['key', 'account'], 1, [5, 10], 1000, 300)).toMatchObject({ added: false, counts: [{ current: 3 }, { current: 10 }] });
  });

  it.each(redisUrl ? (['without Redis', 'with Redis'] as const) : (['without Redis'] as const))('counts one unit in each, %s', async (mode) => {
    const withRedis = mode === 'with Redis';
    const redis = withRedis ? new Redis(redisUrl!, { lazyConnect: true }) : null;
    await redis?.connect();
    const prefix = `stampgate:test:${randomBytes(6).toString('hex')}:`;
    try {
      const store = new (resilientRateLimitStore(redis, null, prefix))();
      const incrAll = (keys: string[]) =>
        new Promise<{ current: number; ttl: number }[]>((resolve, reject) =>
          store.incrAll(keys, (error, result) => (error || !result ? reject(error) : resolve(result)), 30_000),
        );
      expect((await incrAll(['key:a', 'account:1'])).map((c) => c.current)).toEqual([1, 1]);
      expect((await incrAll(['key:b', 'account:1'])).map((c) => c.current)).toEqual([1, 2]);
      const spent = await store.incrAllWithin(['key:a', 'account:1'], 3, [125, 4], 30_000);
      expect(spent).toMatchObject({ added: false, counts: [{ current: 1 }, { current: 2 }] });
      expect(await store.incrAllWithin(['key:a', 'account:1'], 2, [125, 4], 30_000)).toMatchObject({ added: true, counts: [{ current: 3 }, { current: 4 }] });
      for (const counted of (await incrAll(['key:a', 'account:1']))) expect(counted.ttl).toBeGreaterThan(25_000);
    } finally {
      if (redis) {
        const keys = await redis.keys(`${prefix}*`);
        if (keys.length > 0) await redis.del(...keys);
        redis.disconnect();
      }
    }
  });
});

describe.runIf(redisUrl)('the Redis rate-limit store', () => {
  it('gives every counter a TTL of its window, so Redis expires it', async () => {
    const redis = new Redis(redisUrl!, { lazyConnect: true });
    await redis.connect();
    const prefix = `stampgate:test:${randomBytes(6).toString('hex')}:`;
    try {
      const Store = resilientRateLimitStore(redis, null, prefix);
      const store = new Store();
      const incr = (key: string) =>
        new Promise<{ current: number; ttl: number }>((resolve, reject) =>
          store.incr(key, (error, result) => (error || !result ? reject(error) : resolve(result)), 30_000),
        );
      expect((await incr('ip:1')).current).toBe(1);
      expect((await incr('ip:1')).current).toBe(2);
      const ttl = await redis.pttl(`${prefix}ip:1`);
      expect(ttl).toBeGreaterThan(25_000);
      expect(ttl).toBeLessThanOrEqual(30_000);
    } finally {
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
    }
  });
});

/** A free TCP port on the loopback interface. */
async function freePort(): Promise<number> {
  const { createServer } = await import('node:net');
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

// A private redis-server (never the shared one), stopped with SIGSTOP: the TCP connection stays up,
// so only the store itself can stop requests from waiting out the command timeout.
describe.runIf(redisUrl)('the Redis rate-limit store with a hung Redis', () => {
  it('counts locally at once while Redis hangs and goes back to Redis when it answers', async () => {
    const { spawn } = await import('node:child_process');
    const { connectRedis, RedisWatch } = await import('../../src/db/redis.js');
    const port = await freePort();
    const server = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      stdio: 'ignore',
    });
    const watchLog = { warn: () => {}, info: () => {} };
    let client: Redis | null = null;
    try {
      const url = `redis://127.0.0.1:${port}`;
      // Reconnects every 50 ms until the server listens; its commands wait in the offline queue.
      const probe = new Redis(url, { retryStrategy: () => 50 });
      probe.on('error', () => {});
      await probe.ping();
      client = connectRedis(url, new RedisWatch(watchLog));
      await new Promise<void>((resolve) => (client!.status === 'ready' ? resolve() : client!.once('ready', () => resolve())));
      const Store = resilientRateLimitStore(client, new RedisWatch(watchLog), 'stampgate:test:', 300);
      const store = new Store();
      const timed = async (key: string) => {
        const started = performance.now();
        const result = await new Promise<{ current: number; ttl: number }>((resolve, reject) =>
          store.incr(key, (error, value) => (error || !value ? reject(error) : resolve(value)), 60_000),
        );
        return { ...result, ms: performance.now() - started };
      };

      expect((await timed('a')).current).toBe(1);
      expect(await probe.get('stampgate:test:a')).toBe('1');

      process.kill(server.pid!, 'SIGSTOP');
      // Two commands in a row wait out the 250 ms timeout (one slow answer is not an outage).
      const first = await timed('a');
      const second = await timed('a');
      expect(first.ms).toBeGreaterThanOrEqual(200);
      expect(second.ms).toBeGreaterThanOrEqual(200);
      expect([first.current, second.current]).toEqual([1, 2]); // counted locally from here on
      const during: number[] = [];
      for (let i = 0; i < 20; i++) {
        during.push((await timed('a')).ms);
        await new Promise((resolve) => setTimeout(resolve, 50)); // spans several probe intervals
      }
      expect(Math.max(...during)).toBeLessThan(20);

      process.kill(server.pid!, 'SIGCONT');
      // The next probe finds Redis again; counting then returns to Redis.
      const deadline = Date.now() + 10_000;
      while ((await probe.get('stampgate:test:a')) === '1' && Date.now() < deadline) {
        await timed('a');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(Number(await probe.get('stampgate:test:a'))).toBeGreaterThan(1);
      probe.disconnect();
    } finally {
      client?.disconnect();
      process.kill(server.pid!, 'SIGCONT');
      server.kill('SIGKILL');
    }
  }, 30_000);
});
