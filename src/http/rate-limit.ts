import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import type { RedisWatch } from '../db/redis.js';
import { AppError } from '../errors.js';
import { clientAddressKey } from './client-address.js';
import { resilientRateLimitStore } from './rate-limit-store.js';

/** What every budget of the service is made of; each surface says only whom it counts and how many. */
export interface RateLimitOptions {
  /** `onRequest` counts refused and malformed requests too; `preParsing` runs after authentication. */
  hook: 'onRequest' | 'preParsing';
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
  onRejected?: (request: FastifyRequest) => void;
}

/** Charges a request more than the one unit every request costs. */
export interface RateBudget {
  /** Spends `units` more of the request's budget, or throws 429 `rate_limited` (spending nothing) when they do not all fit. */
  spend(request: FastifyRequest, units: number): Promise<void>;
}

/** One budget across every route of the scope it is registered in. */
export async function registerRateLimit(app: FastifyInstance, options: RateLimitOptions): Promise<RateBudget> {
  const max = options.max;
  const Store = resilientRateLimitStore(options.redis, options.redisWatch);
  // Instances of one store class share its counters (and Redis): this one is the plugin's twin.
  const extra = new Store();
  await app.register(rateLimit, {
    global: true,
    hook: options.hook,
    timeWindow: options.windowMs,
    enableDraftSpec: true,
    keyGenerator: options.key,
    max: typeof max === 'number' ? max : (request: FastifyRequest) => max(request),
    store: Store as never,
    onExceeded: (request: FastifyRequest) => options.onRejected?.(request),
    errorResponseBuilder: (_request, context) => new AppError('rate_limited', options.message(context.max, context.after)),
  });
  return {
    async spend(request, units) {
      if (units <= 0) return;
      const limit = typeof max === 'number' ? max : max(request);
      const charged = await extra.incrWithin(options.key(request), units, limit, options.windowMs);
      if (charged.added) return;
      options.onRejected?.(request);
      const seconds = Math.max(1, Math.ceil(charged.ttl / 1000));
      throw new AppError('rate_limited', options.message(limit, `${seconds} seconds`), { 'retry-after': String(seconds) });
    },
  };
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
    hook: 'onRequest',
    windowMs: settings.windowMs,
    key: (request) => `${settings.name}-ip:${clientAddressKey(request.ip)}`,
    max: settings.max,
    message: (limit, retryIn) => `Rate limit of ${limit} requests per ${perWhat} from one address exceeded; retry in ${retryIn}.`,
    redis: settings.redis,
    redisWatch: settings.redisWatch,
    onRejected: () => settings.onRejected?.(),
  });
}
