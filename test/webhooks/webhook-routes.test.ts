import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, seedAccount, type TestApp } from '../helpers/app.js';
import { databaseKinds } from '../helpers/databases.js';

const allowPrivate = { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_MAX_PER_SCORER: '2', WEBHOOK_ROTATION_GRACE_HOURS: '1' };

describe.each(databaseKinds)('webhook endpoint routes on %s', (kind) => {
  let t: TestApp;
  let key: string;
  let scorerId: number;

  const call = (method: 'GET' | 'POST' | 'DELETE', url: string, body?: unknown, apiKey = key) =>
    t.app.inject({ method, url, headers: { 'x-api-key': apiKey }, ...(body === undefined ? {} : { payload: body as object }) });
  const register = (body: unknown = { url: 'http://127.0.0.1:9/hook', events: ['score.updated'] }, apiKey = key, scorer = scorerId) =>
    call('POST', `/v2/scorers/${scorer}/webhooks`, body, apiKey);

  beforeEach(async () => {
    t = await createTestApp(kind, allowPrivate);
    const seeded = await seedAccount(t.ctx);
    key = seeded.key;
    scorerId = seeded.scorer.id;
  });
  afterEach(async () => t.close());

  it('registers an endpoint, shows its secret once, and lists it without secrets', async () => {
    const res = await register({ url: 'http://127.0.0.1:9/hook', events: ['score.updated', 'score.expiring'], description: ' CRM sync ' });
    expect(res.statusCode).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    const created = res.json();
    expect(created).toMatchObject({ url: 'http://127.0.0.1:9/hook', events: ['score.updated', 'score.expiring'], description: 'CRM sync' });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(created.created_at).toMatch(/\+00:00$/);

    const list = await call('GET', `/v2/scorers/${scorerId}/webhooks`);
    expect(list.statusCode).toBe(200);
    expect(list.json().items).toEqual([
      {
        id: created.id,
        scorer_id: scorerId,
        url: 'http://127.0.0.1:9/hook',
        events: ['score.updated', 'score.expiring'],
        description: 'CRM sync',
        enabled: true,
        disabled_reason: null,
        failing_since: null,
        created_at: created.created_at,
      },
    ]);
    expect(list.body).not.toContain('whsec_');
    // Nothing secret at rest: no column of the endpoint row holds the secret or any part of it.
    const row = await t.ctx.database.db.selectFrom('webhook_endpoints').selectAll().executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(created.secret.slice(6, 20));
  });

  it('rotates the secret: a new one, shown once, with the old one signing until the grace period ends', async () => {
    const created = (await register()).json();
    const res = await call('POST', `/v2/webhooks/${created.id}/rotate-secret`);
    expect(res.statusCode).toBe(200);
    const rotated = res.json();
    expect(rotated.id).toBe(created.id);
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(created.secret);
    const graceEnds = Date.parse(rotated.previous_secret_valid_until);
    expect(graceEnds - Date.now()).toBeGreaterThan(3_500_000);
    expect(graceEnds - Date.now()).toBeLessThanOrEqual(3_600_000);
    const row = await t.ctx.database.db.selectFrom('webhook_endpoints').selectAll().executeTakeFirstOrThrow();
    expect(row).toMatchObject({ secret_version: 2, previous_secret_version: 1 });
    // A second rotation gives yet another secret.
    const again = (await call('POST', `/v2/webhooks/${created.id}/rotate-secret`)).json();
    expect(new Set([created.secret, rotated.secret, again.secret]).size).toBe(3);
  });

  it('deletes an endpoint; afterwards it is gone from the list and a second delete is 404', async () => {
    const created = (await register()).json();
    expect((await call('DELETE', `/v2/webhooks/${created.id}`)).statusCode).toBe(204);
    expect((await call('GET', `/v2/scorers/${scorerId}/webhooks`)).json().items).toEqual([]);
    const again = await call('DELETE', `/v2/webhooks/${created.id}`);
    expect(again.statusCode).toBe(404);
    expect(again.json().code).toBe('webhook_not_found');
  });

  it("answers 404 for another account's webhooks and scorer, and changes nothing", async () => {
    const created = (await register()).json();
    const other = await seedAccount(t.ctx);
    for (const [method, url] of [
      ['DELETE', `/v2/webhooks/${created.id}`],
      ['POST', `/v2/webhooks/${created.id}/rotate-secret`],
      ['GET', `/v2/webhooks/${created.id}/deliveries`],
      ['POST', `/v2/webhooks/${created.id}/deliveries/1/retry`],
    ] as const) {
      const res = await call(method, url, undefined, other.key);
      expect(res.statusCode, `${method} ${url}`).toBe(404);
      expect(res.json().code).toBe('webhook_not_found');
    }
    // Ids beyond the 32-bit row ids name nothing: 404, never a database error.
    for (const [method, url] of [
      ['DELETE', '/v2/webhooks/3938173466'],
      ['POST', '/v2/webhooks/999999999999999/rotate-secret'],
      ['GET', '/v2/webhooks/3938173466/deliveries'],
      ['POST', `/v2/webhooks/${created.id}/deliveries/3938173466/retry`],
    ] as const) {
      const res = await call(method, url);
      expect(res.statusCode, `${method} ${url}`).toBe(404);
    }
    expect((await call('GET', `/v2/webhooks/${created.id}/deliveries?before=3938173466`)).statusCode).toBe(400);
    const foreignScorer = await register(undefined, other.key, scorerId);
    expect(foreignScorer.statusCode).toBe(404);
    expect(foreignScorer.json().code).toBe('scorer_not_found');
    expect((await call('GET', `/v2/scorers/${scorerId}/webhooks`, undefined, other.key)).statusCode).toBe(404);
    const row = await t.ctx.database.db.selectFrom('webhook_endpoints').selectAll().executeTakeFirstOrThrow();
    expect(row.secret_version).toBe(1);
  });

  it('refuses a key without create_scorers with 403 naming the permission', async () => {
    const accountId = (await t.ctx.database.db.selectFrom('scorers').select('account_id').where('id', '=', scorerId).executeTakeFirstOrThrow()).account_id;
    const readOnly = await t.ctx.apiKeys.create(accountId, { permissions: ['read_scores'] });
    const res = await register(undefined, readOnly.key);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ code: 'permission_denied' });
    expect(res.json().detail).toContain('create_scorers');
    expect(await t.ctx.database.db.selectFrom('webhook_endpoints').selectAll().execute()).toEqual([]);
  });

  it('refuses a key with create_scorers but without read_scores (an endpoint receives every score)', async () => {
    const accountId = (await t.ctx.database.db.selectFrom('scorers').select('account_id').where('id', '=', scorerId).executeTakeFirstOrThrow()).account_id;
    const managerOnly = await t.ctx.apiKeys.create(accountId, { permissions: ['submit_passports', 'create_scorers'] });
    const res = await register(undefined, managerOnly.key);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ code: 'permission_denied' });
    expect(res.json().detail).toContain('read_scores');
    expect(await t.ctx.database.db.selectFrom('webhook_endpoints').selectAll().execute()).toEqual([]);
  });

  it.each([
    [{ url: 'ftp://127.0.0.1/x', events: ['score.updated'] }, 'invalid_webhook_url'],
    [{ url: 'http://user:pw@127.0.0.1/x', events: ['score.updated'] }, 'invalid_webhook_url'],
    [{ url: 'not a url', events: ['score.updated'] }, 'invalid_webhook_url'],
    [{ url: 'http://127.0.0.1/x', events: [] }, 'invalid_request'],
    [{ url: 'http://127.0.0.1/x', events: ['score.deleted'] }, 'invalid_request'],
    [{ url: 'http://127.0.0.1/x', events: ['score.updated', 'score.updated'] }, 'invalid_request'],
    [{ url: `http://127.0.0.1/${'x'.repeat(2100)}`, events: ['score.updated'] }, 'invalid_request'],
    [{ url: 'http://127.0.0.1/x', events: ['score.updated'], secret: 'whsec_mine' }, 'invalid_request'],
  ])('refuses %j with 400 %s and stores nothing', async (body, code) => {
    const res = await register(body);
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe(code);
    expect(await t.ctx.database.db.selectFrom('webhook_endpoints').selectAll().execute()).toEqual([]);
  });

  it('refuses more than WEBHOOK_MAX_PER_SCORER endpoints with 409', async () => {
    expect((await register()).statusCode).toBe(201);
    expect((await register()).statusCode).toBe(201);
    const third = await register();
    expect(third.statusCode).toBe(409);
    expect(third.json().code).toBe('webhook_limit_reached');
    expect((await call('GET', `/v2/scorers/${scorerId}/webhooks`)).json().items).toHaveLength(2);
  });

  it('documents every webhook and feed route under the v2 tag, with a receiver example', async () => {
    const spec = (await t.app.inject('/openapi.json')).json();
    const ops = [
      ['/v2/scorers/{scorer_id}/webhooks', 'post'],
      ['/v2/scorers/{scorer_id}/webhooks', 'get'],
      ['/v2/webhooks/{id}', 'delete'],
      ['/v2/webhooks/{id}/rotate-secret', 'post'],
      ['/v2/webhooks/{id}/deliveries', 'get'],
      ['/v2/webhooks/{id}/deliveries/{delivery_id}/retry', 'post'],
      ['/v2/scorers/{scorer_id}/events', 'get'],
    ] as const;
    for (const [path, method] of ops) expect(spec.paths[path]?.[method]?.tags, `${method} ${path}`).toEqual(['v2']);
    expect(spec.paths['/v2/scorers/{scorer_id}/webhooks'].post.description).toContain("new Webhook(process.env.WEBHOOK_SECRET).verify(rawBody");
  });

  it('answers an empty delivery log, and 404 delivery_not_found for a retry of an unknown delivery', async () => {
    const created = (await register()).json();
    const log = await call('GET', `/v2/webhooks/${created.id}/deliveries`);
    expect(log.statusCode).toBe(200);
    expect(log.json()).toEqual({ items: [], next: null });
    const retry = await call('POST', `/v2/webhooks/${created.id}/deliveries/999/retry`);
    expect(retry.statusCode).toBe(404);
    expect(retry.json().code).toBe('delivery_not_found');
  });
});

describe.each(databaseKinds)('webhook target guard at registration on %s', (kind) => {
  let t: TestApp;
  afterEach(async () => t.close());

  it.each(['http://127.0.0.1:8080/hook', 'http://[::1]/hook', 'http://169.254.169.254/latest', 'http://10.1.2.3/x', 'http://0x7f000001/x', 'http://localhost/x'])(
    'refuses %s unless private targets are allowed',
    async (url) => {
      t = await createTestApp(kind);
      const { key, scorer } = await seedAccount(t.ctx);
      const res = await t.app.inject({
        method: 'POST',
        url: `/v2/scorers/${scorer.id}/webhooks`,
        headers: { 'x-api-key': key },
        payload: { url, events: ['score.updated'] },
      });
      expect(res.statusCode).toBe(400);
      expect(res.json().code).toBe('invalid_webhook_url');
      expect(res.json().detail).toMatch(/resolves to a (loopback|private|link-local) address/);
      expect(await t.ctx.database.db.selectFrom('webhook_endpoints').selectAll().execute()).toEqual([]);
    },
  );

  it('requires https in production, and answers 503 without WEBHOOK_SECRET_KEY there', async () => {
    t = await createTestApp(kind, { STAMPGATE_ENV: 'production', HOST: '127.0.0.1', PUBLIC_BASE_URL: 'https://api.example.org', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' });
    const { key, scorer } = await seedAccount(t.ctx);
    const post = (url: string) =>
      t.app.inject({ method: 'POST', url: `/v2/scorers/${scorer.id}/webhooks`, headers: { 'x-api-key': key }, payload: { url, events: ['score.updated'] } });
    const unconfigured = await post('https://127.0.0.1/hook');
    expect(unconfigured.statusCode).toBe(503);
    expect(unconfigured.json().code).toBe('webhooks_not_configured');
    await t.close();
    t = await createTestApp(kind, { STAMPGATE_ENV: 'production', HOST: '127.0.0.1', PUBLIC_BASE_URL: 'https://api.example.org', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_SECRET_KEY: 'k'.repeat(40) });
    const seeded = await seedAccount(t.ctx);
    const again = (url: string) =>
      t.app.inject({ method: 'POST', url: `/v2/scorers/${seeded.scorer.id}/webhooks`, headers: { 'x-api-key': seeded.key }, payload: { url, events: ['score.updated'] } });
    const plain = await again('http://127.0.0.1/hook');
    expect(plain.statusCode).toBe(400);
    expect(plain.json().detail).toMatch(/https/);
    expect((await again('https://127.0.0.1/hook')).statusCode).toBe(201);
  });
});
