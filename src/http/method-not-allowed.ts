import type { FastifyInstance } from 'fastify';
import FindMyWay from 'find-my-way';

type Method = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'OPTIONS';
const methods: Method[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/**
 * Which methods a path is served with, for telling "no such path" (404) from "not with this
 * method" (405 with `Allow`). Fastify's router answers only "no route" for both, so every route
 * is recorded, as it is added, in a router of the same kind (find-my-way) that answers per method.
 * Catch-all routes (CORS's `OPTIONS *`) match every path and are left out: with them no path
 * would ever be missing.
 *
 * Call before any route is added; the answer covers the routes added afterwards on any scope.
 */
export function trackRouteMethods(app: FastifyInstance): (path: string) => Method[] {
  // No length limit: an overlong parameter is still a path that exists (its route validates it).
  const router = FindMyWay({ maxParamLength: Number.POSITIVE_INFINITY });
  const served = () => undefined;
  app.addHook('onRoute', (route) => {
    if (route.url === '*' || route.url === '/*') return;
    for (const method of [route.method].flat()) {
      const upper = method.toUpperCase() as Method;
      if (!methods.includes(upper) || router.hasRoute(upper, route.url)) continue;
      router.on(upper, route.url, served);
    }
  });
  return (path) => {
    const allowed = methods.filter((method) => router.find(method, path) !== null);
    // Fastify answers HEAD for every GET route (exposeHeadRoutes).
    if (allowed.includes('GET') && !allowed.includes('HEAD')) allowed.splice(1, 0, 'HEAD');
    return allowed;
  };
}
