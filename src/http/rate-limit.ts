import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import type { RedisWatch } from '../db/redis.js';
import { AppError } from '../errors.js';
import { clientAddressKey } from './client-address.js';
import { resilientRateLimitStore } from './rate-limit-store.js';
import type { Tier } from '../scoring/api-keys.js';

export interface RateLimitSettings {
  windowMs: number;
  tier4: number;
  /** Shared budgets across processes; null counts per process. */
  redis: Redis | null;
  /** Logs the loss and return of Redis once per outage for the process. */
  redisWatch?: RedisWatch | null;
  onRejected?: (tier: Tier) => void;
}

export function tierBudget(tier: Tier, settings: RateLimitSettings): number {
  switch (tier) {
    case 1:
      return 125;
    case 2:
      return 350;
    case 3:
      return 2000;
    case 4:
      return settings.tier4;
  }
}

/**
 * One budget per API key across every route of the scope it is registered in.
 * It runs at `preParsing`, after authentication, so that requests with bad
 * bodies still spend budget and unauthenticated ones never touch a key's.
 */
export async function registerKeyRateLimit(app: FastifyInstance, settings: RateLimitSettings): Promise<void> {
  await app.register(rateLimit, {
    global: true,
    hook: 'preParsing',
    timeWindow: settings.windowMs,
    enableDraftSpec: true,
    keyGenerator: (request: FastifyRequest) => `key:${request.caller?.prefix ?? 'anonymous'}`,
    max: (request: FastifyRequest) => tierBudget(request.caller?.tier ?? 1, settings),
    store: resilientRateLimitStore(settings.redis, settings.redisWatch ?? null) as never,
    onExceeded: (request: FastifyRequest) => settings.onRejected?.(request.caller?.tier ?? 1),
    errorResponseBuilder: (_request, context) =>
      new AppError('rate_limited', `Rate limit of ${context.max} requests per ${Math.round(settings.windowMs / 60000)} minutes exceeded; retry in ${context.after}.`),
  });
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
  await app.register(rateLimit, {
    global: true,
    hook: 'onRequest',
    timeWindow: settings.windowMs,
    enableDraftSpec: true,
    keyGenerator: (request: FastifyRequest) => `${settings.name}-ip:${clientAddressKey(request.ip)}`,
    max: settings.max,
    store: resilientRateLimitStore(settings.redis, settings.redisWatch) as never,
    onExceeded: () => settings.onRejected?.(),
    errorResponseBuilder: (_request, context) =>
      new AppError('rate_limited', `Rate limit of ${context.max} requests per ${perWhat} from one address exceeded; retry in ${context.after}.`),
  });
}
