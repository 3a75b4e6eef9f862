import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import type { RedisWatch } from '../../db/redis.js';
import { type BudgetCounters, type RateBudget, type RateLimitStore, registerRateLimit } from '../../http/rate-limit.js';
import { apiKeyAuthentication, type OnRequestCallback } from './api-key-auth.js';
import type { ApiKeyService, Tier } from './api-keys.service.js';

export interface RateLimitSettings {
  windowMs: number;
  tier4: number;
  /** Shared budgets across processes; null counts per process. */
  redis: Redis | null;
  /** Logs the loss and return of Redis once per outage for the process. */
  redisWatch?: RedisWatch | null;
  /** The process's one store: every scope of API-key routes must count in the same one. */
  store?: RateLimitStore;
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
 * Two budgets per request, across every route of the scope it is registered in: the account's (by
 * the account's tier, shared by all its keys and its portal session, so that minting keys adds no
 * capacity) and, inside it, the key's own (by the key's tier, never above the account's). Both
 * are spent; either refuses. Counted by a route-level onRequest hook, after the scope's
 * authentication and before the body is read, so that requests with bad bodies still spend budget
 * and unauthenticated ones never touch a key's.
 */
export async function registerKeyRateLimit(app: FastifyInstance, settings: RateLimitSettings): Promise<RateBudget> {
  return registerRateLimit(app, {
    windowMs: settings.windowMs,
    key: (request) => `key:${request.caller?.prefix ?? 'anonymous'}`,
    max: (request) => tierBudget(request.caller?.tier ?? 1, settings),
    within: {
      key: (request) => request.caller?.accountBudget ?? 'account:anonymous',
      max: (request) => tierBudget(request.caller?.accountTier ?? 1, settings),
    },
    message: (limit, retryIn) => `Rate limit of ${limit} requests per ${Math.round(settings.windowMs / 60000)} minutes exceeded; retry in ${retryIn}.`,
    redis: settings.redis,
    redisWatch: settings.redisWatch ?? null,
    store: settings.store,
    onRejected: (request) => settings.onRejected?.(request.caller?.tier ?? 1),
  });
}

/** What a scope of API-key routes is built from: the keys, the cookie sign-in it also accepts, the budgets. */
export interface ApiKeyScopeDeps {
  apiKeys: ApiKeyService;
  /** Authenticates a request that presents no key (the portal's session cookie); none: a key is required. */
  withoutKey?: OnRequestCallback;
  windowMs: number;
  tier4: number;
  counters: BudgetCounters;
}

/**
 * Makes every route registered after it in `app` an API-key route: the caller is resolved from the
 * key (or `withoutKey`), then spends one unit of its key's budget and of its account's. Returns the budget, for routes
 * that charge more than one unit.
 */
export async function registerApiKeyScope(app: FastifyInstance, deps: ApiKeyScopeDeps): Promise<RateBudget> {
  app.addHook('onRequest', apiKeyAuthentication(deps.apiKeys, deps.withoutKey));
  return registerKeyRateLimit(app, {
    windowMs: deps.windowMs,
    tier4: deps.tier4,
    redis: deps.counters.redis,
    redisWatch: deps.counters.redisWatch,
    store: deps.counters.store,
    onRejected: (tier) => deps.counters.onRejected?.(tier),
  });
}
