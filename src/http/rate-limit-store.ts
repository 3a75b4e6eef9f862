import type { FastifyBaseLogger } from 'fastify';
import type { Redis } from 'ioredis';

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
 * counting while Redis is unreachable (one warning), returning to Redis by
 * itself once it answers again.
 */
export function resilientRateLimitStore(redis: Redis | null, log: FastifyBaseLogger, prefix = 'stampgate:ratelimit:') {
  const local = new Map<string, Counter>();
  let degraded = false;

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
          if (degraded) {
            degraded = false;
            log.info('Redis is reachable again: rate limits are shared across processes again');
          }
          callback(null, { current, ttl });
        })
        .catch((error: Error) => {
          if (!degraded) {
            degraded = true;
            log.warn({ err: error.message }, 'Redis is unreachable: rate limits are counted per process until it returns');
          }
          callback(null, incrLocal(key, windowMs));
        });
    }

    child(): ResilientStore {
      return this;
    }
  };
}
