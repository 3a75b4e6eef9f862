import type { Redis } from 'ioredis';
import type { RedisWatch } from '../db/redis.js';

type IncrCallback = (error: Error | null, result: { current: number; ttl: number } | null) => void;

interface Counter {
  current: number;
  resetAt: number;
}

// Same fixed-window arithmetic as the local fallback: the first hit opens the window.
const incrScript = `
local current = redis.call('INCR', KEYS[1])
if current == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
return {current, ttl}
`;

/**
 * A rate-limit store for @fastify/rate-limit that keeps budgets in Redis, so
 * every API process spends the same budget, and falls back to per-process
 * counting while Redis is unreachable (one warning per outage for the whole process, see
 * RedisWatch), returning to Redis by itself once it answers again.
 */
export function resilientRateLimitStore(redis: Redis | null, watch: RedisWatch | null, prefix = 'stampgate:ratelimit:') {
  const local = new Map<string, Counter>();

  function incrLocal(key: string, windowMs: number): { current: number; ttl: number } {
    const now = Date.now();
    let counter = local.get(key);
    if (!counter || counter.resetAt <= now) {
      counter = { current: 0, resetAt: now + windowMs };
      local.set(key, counter);
      if (local.size > 100_000) {
        for (const [k, c] of local) if (c.resetAt <= now) local.delete(k);
      }
    }
    counter.current += 1;
    return { current: counter.current, ttl: counter.resetAt - now };
  }

  return class ResilientStore {
    incr(key: string, callback: IncrCallback, windowMs: number): void {
      if (!redis) {
        callback(null, incrLocal(key, windowMs));
        return;
      }
      redis
        .eval(incrScript, 1, `${prefix}${key}`, windowMs)
        .then((reply) => {
          const [current, ttl] = reply as [number, number];
          watch?.back();
          callback(null, { current, ttl });
        })
        .catch((error: Error) => {
          watch?.lost(error);
          callback(null, incrLocal(key, windowMs));
        });
    }

    child(): ResilientStore {
      return this;
    }
  };
}
