import { Type } from '@sinclair/typebox';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors.js';
import { registerErrorHandling } from '../../src/http/errors.js';

async function appWithRoutes() {
  const app = Fastify({ logger: false, bodyLimit: 1024 });
  registerErrorHandling(app);
  app.post(
    '/echo/:address',
    {
      schema: {
        params: Type.Object({ address: Type.String({ pattern: '^0[xX][0-9a-fA-F]{40}$' }) }),
        querystring: Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 0, maximum: 1000 })) }),
        body: Type.Object({ scorer_id: Type.String() }),
      },
    },
    async (request) => request.body,
  );
  app.get('/boom', async () => {
    throw new Error('secret internal detail at /srv/app.ts:12 select * from api_keys');
  });
  app.get('/refuse', async () => {
    throw new AppError('permission_denied', 'Nope.');
  });
  await app.ready();
  return app;
}

const address = '0x' + 'a'.repeat(40);

describe('error handling', () => {
  it.each([
    ['unknown route', { method: 'GET', url: '/nowhere' }, 404, 'not_found'],
    ['bad address', { method: 'POST', url: '/echo/0x12', payload: { scorer_id: '1' } }, 400, 'invalid_address'],
    ['bad limit', { method: 'POST', url: `/echo/${address}?limit=-1`, payload: { scorer_id: '1' } }, 400, 'invalid_limit'],
    ['huge limit', { method: 'POST', url: `/echo/${address}?limit=1001`, payload: { scorer_id: '1' } }, 400, 'invalid_limit'],
    ['missing field', { method: 'POST', url: `/echo/${address}`, payload: {} }, 400, 'invalid_request'],
    ['wrong type', { method: 'POST', url: `/echo/${address}`, payload: { scorer_id: { a: 1 } } }, 400, 'invalid_request'],
    ['malformed JSON', { method: 'POST', url: `/echo/${address}`, payload: '{"scorer_id":', headers: { 'content-type': 'application/json' } }, 400, 'invalid_json'],
    ['wrong media type', { method: 'POST', url: `/echo/${address}`, payload: 'x', headers: { 'content-type': 'text/csv' } }, 415, 'unsupported_media_type'],
    ['too large', { method: 'POST', url: `/echo/${address}`, payload: { scorer_id: 'x'.repeat(2000) } }, 413, 'payload_too_large'],
    ['domain refusal', { method: 'GET', url: '/refuse' }, 403, 'permission_denied'],
  ] as const)('%s → %i %s with the standard body', async (_what, request, status, code) => {
    const app = await appWithRoutes();
    const res = await app.inject(request as never);
    expect(res.statusCode).toBe(status);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['code', 'detail']);
    expect(body.code).toBe(code);
    expect(body.detail.length).toBeGreaterThan(0);
  });

  it('hides the internals of an unexpected error behind a generic 500', async () => {
    const app = await appWithRoutes();
    const res = await app.inject('/boom');
    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual({ detail: expect.any(String), code: 'internal_error' });
    expect(res.body).not.toMatch(/secret|srv|select|stack/i);
  });
});
