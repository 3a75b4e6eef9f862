import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction, RouteOptions } from 'fastify';
import type { Redis } from 'ioredis';
import type { RedisWatch } from '../db/redis.js';
import { AppError } from '../errors.js';
import { clientAddressKey } from './client-address.js';
import { type Counted, resilientRateLimitStore } from './rate-limit-store.js';

/** Which budget refused a request, as the metrics name it: an API key's tier or an anonymous surface. */
export type RejectedBudget = number | 'wallet' | 'stake_events' | 'public' | 'portal' | 'onchain';

/** The counters of a process: in Redis when it is there, else (and while it is lost) in this process. */
export type RateLimitStore = InstanceType<ReturnType<typeof resilientRateLimitStore>>;

/**
 * Where a process counts its budgets (Redis, shared by every process, or this process alone) and
 * who hears of a refusal: what every surface's route plugin is given to register its budget.
 */
export interface BudgetCounters {
  /** Shared budgets across processes; null counts per process. */
  redis: Redis | null;
  /** Logs the loss and return of Redis once per outage for the process. */
  redisWatch: RedisWatch | null;
  /**
   * The process's one store, for budgets that several scopes spend from (an API key's and its
   * account's, on the account routes as on the scoring routes): without Redis a store of each
   * scope's own would count them apart.
   */
  store: RateLimitStore;
  /** Told of each refused request (the request metrics count them). */
  onRejected?: (budget: RejectedBudget) => void;
}

/** The budget counters of a process, with its one shared store. */
export function budgetCounters(redis: Redis | null, redisWatch: RedisWatch | null, onRejected?: (budget: RejectedBudget) => void): BudgetCounters {
  return { redis, redisWatch, store: new (resilientRateLimitStore(redis, redisWatch))(), onRejected };
}

/** A budget that encloses the request's own (its account's, around its key's): both are spent, and both must allow. */
export interface EnclosingBudget {
  key: (request: FastifyRequest) => string;
  max: (request: FastifyRequest) => number;
}

/** What every budget of the service is made of; each surface says only whom it counts and how many. */
export interface RateLimitOptions {
  windowMs: number;
  /** The counter a request spends from; unique across every budget sharing the store. */
  key: (request: FastifyRequest) => string;
  max: number | ((request: FastifyRequest) => number);
  /** The `detail` of the 429 answer. */
  message: (limit: number, retryIn: string) => string;
  /** Shared budgets across processes; null counts per process. */
  redis: Redis | null;
  /** Logs the loss and return of Redis once per outage for the process. */
  redisWatch: RedisWatch | null;
  /** Counts in this store (shared with other scopes) rather than one of the budget's own. */
  store?: RateLimitStore;
  /** Every request also spends from this budget, and is refused when either is spent. */
  within?: EnclosingBudget;
  onRejected?: (request: FastifyRequest) => void;
}

/** Which of a request's budgets its headers report: the one that refused (the longest wait), else the one with least left. */
function bindingIndex(counts: readonly Counted[], limits: readonly number[]): number {
  let best = 0;
  for (let i = 1; i < counts.length; i++) {
    const over = counts[i]!.current > limits[i]!;
    const bestOver = counts[best]!.current > limits[best]!;
    if (over !== bestOver) {
      if (over) best = i;
      continue;
    }
    const left = limits[i]! - counts[i]!.current;
    const bestLeft = limits[best]! - counts[best]!.current;
    if (over ? counts[i]!.ttl > counts[best]!.ttl : left < bestLeft || (left === bestLeft && counts[i]!.ttl > counts[best]!.ttl)) best = i;
  }
  return best;
}

/** Charges a request more than the one unit every request costs. */
export interface RateBudget {
  /**
   * Spends `units` more of the request's budget, or throws 429 `rate_limited` (spending nothing) when they do not all fit.
   * Either way the answer's `RateLimit-Remaining` and `RateLimit-Reset` are set again from the count after it: the
   * hook set them after the request's first unit only.
   */
  spend(request: FastifyRequest, reply: FastifyReply, units: number): Promise<void>;
}

/**
 * One budget across every route of the scope it is registered in (those added after it), with
 * the IETF draft's `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset` on every answer
 * and `Retry-After` on a 429. A callback hook on each route, as @fastify/rate-limit attaches its
 * own, in place of that plugin, whose async hook awaited four times per request (docs/decisions.md,
 * "Rate limit, request metrics and API-key digest off the per-request path").
 */
export async function registerRateLimit(app: FastifyInstance, options: RateLimitOptions): Promise<RateBudget> {
  const max = options.max;
  const limitOf = typeof max === 'number' ? () => max : max;
  const store = options.store ?? new (resilientRateLimitStore(options.redis, options.redisWatch))();
  const within = options.within;

  // Headers on every answer, and the refusal once the count is over the limit.
  const answer = (request: FastifyRequest, reply: FastifyReply, limit: number, counted: Counted): Error | undefined => {
    const seconds = Math.max(1, Math.ceil(counted.ttl / 1000));
    reply.header('ratelimit-limit', limit);
    if (counted.current <= limit) {
      reply.header('ratelimit-remaining', limit - counted.current);
      reply.header('ratelimit-reset', seconds);
      return undefined;
    }
    options.onRejected?.(request);
    reply.header('ratelimit-remaining', 0);
    reply.header('ratelimit-reset', seconds);
    reply.header('retry-after', seconds);
    return new AppError('rate_limited', options.message(limit, durationText(seconds)));
  };

  // A request spends one unit of its own budget and of the enclosing one; the headers report the binding one.
  const countWithin = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction, enclosing: EnclosingBudget): void => {
    let keys: string[];
    let limits: number[];
    let counted: Counted[] | null;
    let refusal: Error | undefined;
    try {
      keys = [options.key(request), enclosing.key(request)];
      limits = [limitOf(request), enclosing.max(request)];
      counted = store.countAllLocally(keys, options.windowMs);
      if (counted) {
        const i = bindingIndex(counted, limits);
        refusal = answer(request, reply, limits[i]!, counted[i]!);
      }
    } catch (failure) {
      return done(failure as Error);
    }
    if (counted) return done(refusal);
    store.incrAll(
      keys,
      (error, result) => {
        if (error || !result) return done(error ?? new Error('the rate-limit store counted nothing'));
        let refusal: Error | undefined;
        try {
          const i = bindingIndex(result, limits);
          refusal = answer(request, reply, limits[i]!, result[i]!);
        } catch (failure) {
          refusal = failure as Error;
        }
        done(refusal);
      },
      options.windowMs,
    );
  };

  const count = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void => {
    if (within) return countWithin(request, reply, done, within);
    let limit: number;
    let key: string;
    let counted: Counted | null;
    let refusal: Error | undefined;
    try {
      limit = limitOf(request);
      key = options.key(request);
      // Counted in this process (no Redis, or Redis lost): answered at once, without a callback.
      counted = store.countLocally(key, options.windowMs);
      if (counted) refusal = answer(request, reply, limit, counted);
    } catch (failure) {
      return done(failure as Error);
    }
    // Outside the try: `done` runs the rest of the request, and a throw there must not call it twice.
    if (counted) return done(refusal);
    store.incr(
      key,
      (error, result) => {
        // Uncounted is refused, never let through (the store itself falls back rather than fail).
        if (error || !result) return done(error ?? new Error('the rate-limit store counted nothing'));
        let refusal: Error | undefined;
        try {
          refusal = answer(request, reply, limit, result);
        } catch (failure) {
          refusal = failure as Error;
        }
        done(refusal);
      },
      options.windowMs,
    );
  };
  // A route-level onRequest hook runs after every onRequest hook of the route's scopes (the API-key
  // and wallet-session hooks) and before the body is read, so refused and malformed requests spend
  // budget too, and an unauthenticated one never touches a key's.
  app.addHook('onRoute', (route: RouteOptions) => {
    const existing = route.onRequest as unknown;
    route.onRequest = (existing === undefined ? [count] : [...(Array.isArray(existing) ? existing : [existing]), count]) as never;
  });

  return {
    async spend(request, reply, units) {
      if (units <= 0) return;
      let limit = limitOf(request);
      let charged: { current: number; ttl: number; added: boolean };
      if (within) {
        const limits = [limit, within.max(request)];
        const all = await store.incrAllWithin([options.key(request), within.key(request)], units, limits, options.windowMs);
        // Reported as the request's hook did: the budget with least left after the units (or before, refused).
        const i = bindingIndex(all.counts, limits);
        limit = limits[i]!;
        charged = { ...all.counts[i]!, added: all.added };
      } else {
        charged = await store.incrWithin(options.key(request), units, limit, options.windowMs);
      }
      const seconds = Math.max(1, Math.ceil(charged.ttl / 1000));
      reply.header('ratelimit-remaining', Math.max(0, limit - charged.current));
      reply.header('ratelimit-reset', seconds);
      if (charged.added) return;
      options.onRejected?.(request);
      throw new AppError('rate_limited', options.message(limit, durationText(seconds)), { 'retry-after': String(seconds) });
    },
  };
}

/** "45 seconds", "1 minute", "15 minutes", "2 hours": the wait in a 429's detail. */
export function durationText(seconds: number): string {
  const [amount, unit] =
    seconds < 60 ? [seconds, 'second'] : seconds < 3600 ? [Math.round(seconds / 60), 'minute'] : seconds < 86_400 ? [Math.round(seconds / 3600), 'hour'] : [Math.round(seconds / 86_400), 'day'];
  return `${amount} ${unit}${amount === 1 ? '' : 's'}`;
}

export interface IpRateLimitSettings {
  /** Names the budget in the store, apart from every other budget of the same client address. */
  name: string;
  max: number;
  windowMs: number;
  /** Shared budgets across processes; null counts per process. */
  redis: Redis | null;
  redisWatch: RedisWatch | null;
  onRejected?: () => void;
}

/**
 * One budget per client address (`request.ip`, which honours TRUST_PROXY only; an IPv6 client's
 * /64, see clientAddressKey) across every route of the scope it is registered in, for keyless routes. Counted at `onRequest`, before anything
 * else runs, so refused and malformed requests spend budget too.
 */
export async function registerIpRateLimit(app: FastifyInstance, settings: IpRateLimitSettings): Promise<void> {
  const perWhat = settings.windowMs === 60_000 ? 'minute' : `${Math.round(settings.windowMs / 1000)} seconds`;
  await registerRateLimit(app, {
    windowMs: settings.windowMs,
    key: (request) => `${settings.name}-ip:${clientAddressKey(request.ip)}`,
    max: settings.max,
    message: (limit, retryIn) => `Rate limit of ${limit} requests per ${perWhat} from one address exceeded; retry in ${retryIn}.`,
    redis: settings.redis,
    redisWatch: settings.redisWatch,
    onRejected: () => settings.onRejected?.(),
  });
}
