import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { describe, expect, inject, it } from 'vitest';
import { resilientRateLimitStore, WindowCounters } from '../../src/http/rate-limit-store.js';

const redisUrl = inject('redisUrl');

describe('charging several rate-limit units at once (the synchronous batch)', () => {
  it('adds the units only when they all fit, in the window the plugin counts in', () => {
    const counters = new WindowCounters();
    counters.incr('k', 1000, 0);
    expect(counters.incrWithin('k', 5, 10, 1000, 100)).toEqual({ current: 6, ttl: 900, added: true });
    expect(counters.incrWithin('k', 5, 10, 1000, 200)).toEqual({ current: 6, ttl: 800, added: false });
    expect(counters.incrWithin('k', 4, 10, 1000, 300)).toEqual({ current: 10, ttl: 700, added: true });
    // The plugin's own count goes on from there, and a new window starts from nothing.
    expect(counters.incr('k', 1000, 400).current).toBe(11);
    expect(counters.incrWithin('k', 10, 10, 1000, 1000)).toEqual({ current: 10, ttl: 1000, added: true });
    expect(counters.incrWithin('new', 3, 2, 1000, 0)).toEqual({ current: 0, ttl: 1000, added: false });
  });

  it.runIf(redisUrl)('does the same atomically on Redis, with the window as the key TTL', async () => {
    const redis = new Redis(redisUrl!, { lazyConnect: true });
    await redis.connect();
    const prefix = `stampgate:test:${randomBytes(6).toString('hex')}:`;
    try {
      const store = new (resilientRateLimitStore(redis, null, prefix))();
      expect(await store.incrWithin('key:a', 5, 10, 30_000)).toMatchObject({ current: 5, added: true });
      expect(await store.incrWithin('key:a', 6, 10, 30_000)).toMatchObject({ current: 5, added: false });
      expect(await store.incrWithin('key:a', 5, 10, 30_000)).toMatchObject({ current: 10, added: true });
      expect(await redis.get(`${prefix}key:a`)).toBe('10');
      const ttl = await redis.pttl(`${prefix}key:a`);
      expect(ttl).toBeGreaterThan(25_000);
      expect(ttl).toBeLessThanOrEqual(30_000);
    } finally {
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
    }
  });
});
