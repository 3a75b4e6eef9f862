import type { Redis } from 'ioredis';
import type { RedisWatch } from '../db/redis.js';

/** A budget's count after this request, and the milliseconds until its window ends. */
export interface Counted {
  current: number;
  ttl: number;
}

type IncrCallback = (error: Error | null, result: Counted | null) => void;

interface Counter {
  current: number;
  resetAt: number;
}

/**
 * Fixed-window counters that expire in time order: a binary min-heap of window ends beside the
 * map, so each increment drops the windows that have ended (each once) and costs O(log n) however
 * many keys an address-rotating client creates, instead of a sweep over every key.
 */
export class WindowCounters {
  private readonly counters = new Map<string, Counter>();
  // The heap, as parallel arrays: window end and key of each open window (one entry per counter).
  private readonly ends: number[] = [];
  private readonly keys: string[] = [];

  get size(): number {
    return this.counters.size;
  }

  incr(key: string, windowMs: number, now: number = Date.now()): { current: number; ttl: number } {
    this.expire(now);
    let counter = this.counters.get(key);
    if (!counter) {
      counter = { current: 0, resetAt: now + windowMs };
      this.counters.set(key, counter);
      this.push(counter.resetAt, key);
    }
    counter.current += 1;
    return { current: counter.current, ttl: counter.resetAt - now };
  }

  /**
   * Adds `units` to the key's count if the result stays within `max`; otherwise counts nothing.
   * `added` says which; `current` is the count after.
   */
  incrWithin(key: string, units: number, max: number, windowMs: number, now: number = Date.now()): { current: number; ttl: number; added: boolean } {
    this.expire(now);
    const existing = this.counters.get(key);
    const before = existing?.current ?? 0;
    if (before + units > max) return { current: before, ttl: existing ? existing.resetAt - now : windowMs, added: false };
    this.incr(key, windowMs, now);
    this.counters.get(key)!.current += units - 1;
    return { current: before + units, ttl: this.counters.get(key)!.resetAt - now, added: true };
  }

  /**
   * Adds `units` to every key's count if each result stays within its `maxes` entry; otherwise
   * counts nothing anywhere. `counts` are the counts after, in the order of `keys`.
   */
  incrAllWithin(keys: readonly string[], units: number, maxes: readonly number[], windowMs: number, now: number = Date.now()): { counts: Counted[]; added: boolean } {
    this.expire(now);
    const fits = keys.every((key, i) => (this.counters.get(key)?.current ?? 0) + units <= maxes[i]!);
    const counts = keys.map((key, i) => {
      if (fits) {
        const { current, ttl } = this.incrWithin(key, units, maxes[i]!, windowMs, now);
        return { current, ttl };
      }
      const existing = this.counters.get(key);
      return { current: existing?.current ?? 0, ttl: existing ? existing.resetAt - now : windowMs };
    });
    return { counts, added: fits };
  }

  /** Removes every counter whose window has ended by `now`. */
  expire(now: number): void {
    while (this.ends.length > 0 && this.ends[0]! <= now) {
      this.counters.delete(this.keys[0]!);
      this.pop();
    }
  }

  private push(end: number, key: string): void {
    const { ends, keys } = this;
    let i = ends.length;
    ends.push(end);
    keys.push(key);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (ends[parent]! <= end) break;
      ends[i] = ends[parent]!;
      keys[i] = keys[parent]!;
      i = parent;
    }
    ends[i] = end;
    keys[i] = key;
  }

  private pop(): void {
    const { ends, keys } = this;
    const lastEnd = ends.pop()!;
    const lastKey = keys.pop()!;
    const n = ends.length;
    if (n === 0) return;
    let i = 0;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && ends[child + 1]! < ends[child]!) child += 1;
      if (ends[child]! >= lastEnd) break;
      ends[i] = ends[child]!;
      keys[i] = keys[child]!;
      i = child;
    }
    ends[i] = lastEnd;
    keys[i] = lastKey;
  }
}

// Same fixed-window arithmetic as the local fallback: the first hit opens the window.
const incrScript = `
local current = redis.call('INCR', KEYS[1])
if current == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
return {current, ttl}
`;

// The same window, charged several units at once and only when they all fit (see incrWithin).
const incrWithinScript = `
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
local units = tonumber(ARGV[2])
if current + units > tonumber(ARGV[3]) then
  local ttl = redis.call('PTTL', KEYS[1])
  if ttl < 0 then ttl = tonumber(ARGV[1]) end
  return {current, ttl, 0}
end
current = redis.call('INCRBY', KEYS[1], units)
if current == units then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
return {current, ttl, 1}
`;

// Several budgets at once (a key's and its account's), one unit each: every count, then its window.
const incrAllScript = `
local out = {}
for _, key in ipairs(KEYS) do
  local current = redis.call('INCR', key)
  if current == 1 then redis.call('PEXPIRE', key, ARGV[1]) end
  local ttl = redis.call('PTTL', key)
  if ttl < 0 then redis.call('PEXPIRE', key, ARGV[1]); ttl = tonumber(ARGV[1]) end
  out[#out + 1] = current
  out[#out + 1] = ttl
end
return out
`;

// Several budgets charged `units` at once, in all of them or in none (ARGV[3..]: each key's max).
const incrAllWithinScript = `
local units = tonumber(ARGV[2])
local before = {}
local fits = 1
for i, key in ipairs(KEYS) do
  before[i] = tonumber(redis.call('GET', key) or '0')
  if before[i] + units > tonumber(ARGV[2 + i]) then fits = 0 end
end
local out = {fits}
for i, key in ipairs(KEYS) do
  local current = before[i]
  if fits == 1 then
    current = redis.call('INCRBY', key, units)
    if current == units then redis.call('PEXPIRE', key, ARGV[1]) end
  end
  local ttl = redis.call('PTTL', key)
  if ttl < 0 then
    if fits == 1 then redis.call('PEXPIRE', key, ARGV[1]) end
    ttl = tonumber(ARGV[1])
  end
  out[#out + 1] = current
  out[#out + 1] = ttl
end
return out
`;

/** Pairs of a Redis reply (count, ttl, count, ttl, …) from `offset` on. */
function countsOf(reply: readonly number[], offset: number): Counted[] {
  const counts: Counted[] = [];
  for (let i = offset; i + 1 < reply.length; i += 2) counts.push({ current: reply[i]!, ttl: reply[i + 1]! });
  return counts;
}

/** How long the store counts locally after Redis failed before it tries Redis again. */
export const REDIS_PROBE_INTERVAL_MS = 1000;

/**
 * The rate-limit store (src/http/rate-limit.ts) that keeps budgets in Redis, so
 * every API process spends the same budget, and falls back to per-process
 * counting while Redis is unreachable (one warning per outage for the whole process, see
 * RedisWatch), returning to Redis by itself once it answers again.
 *
 * Once two commands in a row have failed the store counts locally at once: a hung Redis (stopped, not closed)
 * keeps its TCP connection, so ioredis never reconnects and every command would wait out its
 * timeout. One background probe at most every REDIS_PROBE_INTERVAL_MS (or the client's next
 * `ready`) decides when to go back; no request ever waits for it.
 */
export function resilientRateLimitStore(
  redis: Redis | null,
  watch: RedisWatch | null,
  prefix = 'stampgate:ratelimit:',
  probeIntervalMs = REDIS_PROBE_INTERVAL_MS,
) {
  const local = new WindowCounters();
  let lost = false;
  let failuresInARow = 0;
  let nextProbeAt = 0;
  let probing = false;

  function incrLocal(key: string, windowMs: number): { current: number; ttl: number } {
    return local.incr(key, windowMs);
  }

  function markLost(error: Error): void {
    watch?.lost(error);
    lost = true;
    nextProbeAt = Date.now() + probeIntervalMs;
  }

  // One slow answer on a busy machine is not an outage: only that request counts locally, so
  // budgets shared by several processes stay shared. A second failure in a row is.
  function commandFailed(error: Error): void {
    failuresInARow += 1;
    if (failuresInARow >= 2) markLost(error);
    else watch?.lost(error);
  }

  function markBack(): void {
    lost = false;
    failuresInARow = 0;
    watch?.back();
  }

  function probe(): void {
    if (probing || Date.now() < nextProbeAt || !redis) return;
    probing = true;
    redis
      .ping()
      .then(markBack, markLost)
      .finally(() => {
        probing = false;
      });
  }

  redis?.on('ready', () => {
    lost = false;
    failuresInARow = 0;
  });

  return class ResilientStore {
    /**
     * Counts in this process and answers at once when the count is local (no Redis, or Redis lost);
     * null when Redis counts, through `incr`.
     */
    countLocally(key: string, windowMs: number): Counted | null {
      if (redis && !lost) return null;
      if (lost) probe();
      return incrLocal(key, windowMs);
    }

    incr(key: string, callback: IncrCallback, windowMs: number): void {
      const local = this.countLocally(key, windowMs);
      if (local) {
        callback(null, local);
        return;
      }
      // Not counted locally, so Redis is there and counts. The count first, the callback after: the
      // callback runs the rest of the request, and nothing it does may count as a Redis failure or
      // call it twice.
      redis!
        .eval(incrScript, 1, `${prefix}${key}`, windowMs)
        .then(
          (reply) => {
            const [current, ttl] = reply as [number, number];
            failuresInARow = 0;
            watch?.back();
            return { current, ttl };
          },
          (error: Error) => {
            commandFailed(error);
            return incrLocal(key, windowMs);
          },
        )
        .then((counted) => callback(null, counted));
    }

    /**
     * Counts one unit in each of several budgets (an API key's and its account's); as
     * `countLocally`, null when Redis counts (through `incrAll`).
     */
    countAllLocally(keys: readonly string[], windowMs: number): Counted[] | null {
      if (redis && !lost) return null;
      if (lost) probe();
      return keys.map((key) => incrLocal(key, windowMs));
    }

    /** One unit in each of several budgets, in one Redis command (all or, on failure, all locally). */
    incrAll(keys: readonly string[], callback: (error: Error | null, result: Counted[] | null) => void, windowMs: number): void {
      const local = this.countAllLocally(keys, windowMs);
      if (local) {
        callback(null, local);
        return;
      }
      redis!
        .eval(incrAllScript, keys.length, ...keys.map((key) => `${prefix}${key}`), windowMs)
        .then(
          (reply) => {
            failuresInARow = 0;
            watch?.back();
            return countsOf(reply as number[], 0);
          },
          (error: Error) => {
            commandFailed(error);
            return keys.map((key) => incrLocal(key, windowMs));
          },
        )
        .then((counted) => callback(null, counted));
    }

    /** `units` more of each of several budgets when they fit within every one's max, else none. */
    async incrAllWithin(keys: readonly string[], units: number, maxes: readonly number[], windowMs: number): Promise<{ counts: Counted[]; added: boolean }> {
      if (!redis || lost) {
        if (lost) probe();
        return local.incrAllWithin(keys, units, maxes, windowMs);
      }
      try {
        const reply = (await redis.eval(incrAllWithinScript, keys.length, ...keys.map((key) => `${prefix}${key}`), windowMs, units, ...maxes)) as number[];
        failuresInARow = 0;
        watch?.back();
        return { counts: countsOf(reply, 1), added: reply[0] === 1 };
      } catch (error) {
        commandFailed(error as Error);
        return local.incrAllWithin(keys, units, maxes, windowMs);
      }
    }

    /**
     * Spends `units` more of the key's budget when they all fit within `max`, for a request that
     * costs more than the one unit its hook counted (the synchronous batch: one per address).
     */
    async incrWithin(key: string, units: number, max: number, windowMs: number): Promise<{ current: number; ttl: number; added: boolean }> {
      if (!redis || lost) {
        if (lost) probe();
        return local.incrWithin(key, units, max, windowMs);
      }
      try {
        const reply = (await redis.eval(incrWithinScript, 1, `${prefix}${key}`, windowMs, units, max)) as [number, number, number];
        failuresInARow = 0;
        watch?.back();
        return { current: reply[0], ttl: reply[1], added: reply[2] === 1 };
      } catch (error) {
        commandFailed(error as Error);
        return local.incrWithin(key, units, max, windowMs);
      }
    }
  };
}
