import cookie from '@fastify/cookie';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../../config/index.js';
import type { Redis } from 'ioredis';
import type { RedisWatch } from '../../db/redis.js';
import { registerIpRateLimit } from '../../http/rate-limit.js';
import type { PublicDataModule } from '../publicdata.module.js';
import { bountiesRoute } from '../bounties/routes/bounties.js';
import { exportRoutes } from '../exports/routes/exports.js';
import { grantsRoute } from '../grants/routes/grants.js';
import { legacyBountyRoute } from '../bounties/routes/legacy-bounty.js';
import { loginRoutes } from '../exports/routes/login.js';

const MINUTE_MS = 60_000;

/** What the public data API is served with. */
export interface PublicDataRouteDeps {
  publicData: PublicDataModule;
  config: Pick<Config, 'publicBaseUrl' | 'publicRateLimitPerMinute'>;
  /** Shares the per-address budget between processes; null counts per process. */
  redis: Redis | null;
  redisWatch: RedisWatch | null;
  /** Called when a request is refused for the per-address budget (a metric). */
  onRateLimitRejected?: () => void;
}

/** The public data API: `/api/v0.1/…` and `/grants/…`. */
export async function publicDataRoutes(app: FastifyInstance, deps: PublicDataRouteDeps): Promise<void> {
  // Anonymous API: one budget per client address (request.ip, which honours only trusted proxies),
  // spent before anything else runs, shared by every process through Redis when REDIS_URL is set.
  await registerIpRateLimit(app, {
    name: 'public',
    max: deps.config.publicRateLimitPerMinute,
    windowMs: MINUTE_MS,
    redis: deps.redis,
    redisWatch: deps.redisWatch,
    onRejected: deps.onRateLimitRejected,
  });
  bountiesRoute(app, deps);
  grantsRoute(app, deps);
  legacyBountyRoute(app, deps);
  // Signed cookies (login session, login state) only where they are read: the cookie plugin's two
  // hooks would otherwise run on every anonymous list request too.
  await app.register(async (scope) => {
    await scope.register(cookie, { secret: deps.publicData.sessionSecret });
    exportRoutes(scope, deps);
    loginRoutes(scope, deps);
  });
  // The original service answered the list paths without their trailing slash with a redirect; clients rely on it.
  for (const path of ['/api/v0.1/bounties', '/api/v0.1/grants']) {
    const schema = {
      tags: ['public data'],
      summary: `Redirect to ${path}/`,
      description: 'Answers 301 with `Location: ' + path + '/` and the query string unchanged (the original service did; its clients follow it).',
      response: { 301: { description: 'Moved permanently to the path with its trailing slash.', type: 'null' } },
    };
    app.get(path, { schema }, async (request, reply) => {
      const query = request.url.indexOf('?');
      return reply.redirect(`${path}/${query === -1 ? '' : request.url.slice(query)}`, 301);
    });
  }
}
