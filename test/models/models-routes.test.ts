import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
// @ts-expect-error plain JavaScript example without type declarations
import { createModelService, scoreOf } from '../../examples/model-service/server.mjs';
import { createTestApp, seedAccount, type TestApp } from '../helpers/app.js';
import { databaseKinds } from '../helpers/databases.js';

const address = '0x85b0f0e5d5c5f0ba5b3a4e1ed6e4a1e8ff0e2c4b';

function listen(server: Server): Promise<string> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`)));
}

/** A model service that answers every POST with `body` (or never, when null), counting calls. */
function fakeService(body: string | null) {
  const state = { calls: 0 };
  const server = createServer((req, res) => {
    state.calls += 1;
    req.resume();
    if (body !== null) res.writeHead(200, { 'content-type': 'text/html' }).end(body);
  });
  return { server, state };
}

describe.each(databaseKinds)('models API on %s', (kind) => {
  const example = createModelService();
  const second = createModelService();
  const garbage = {
    html: fakeService('<html>oops</html>'),
    huge: fakeService(JSON.stringify({ score: 1, pad: 'x'.repeat(200_000) })),
    text: fakeService(JSON.stringify({ score: 'abc' })),
    big: fakeService(JSON.stringify({ score: 500 })),
    slow: fakeService(null),
  };
  const urls: Record<string, string> = {};
  let t: TestApp;
  let key: string;

  beforeAll(async () => {
    urls.aggregate = await listen(example.server);
    urls.second = await listen(second.server);
    for (const [name, service] of Object.entries(garbage)) urls[name] = await listen(service.server);
    // A port that was open and is closed now: nothing listens there.
    const closed = createServer();
    urls.down = await listen(closed);
    await new Promise((resolve) => closed.close(resolve));
  });
  afterAll(async () => {
    for (const server of [example.server, second.server, ...Object.values(garbage).map((g) => g.server)]) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
  beforeEach(async () => {
    t = await createTestApp(kind, {
      MODELS: Object.entries(urls).map(([name, url]) => `${name}=${url}`).join(','),
      OUTBOUND_TIMEOUT_MS: '300',
    });
    key = (await seedAccount(t.ctx)).key;
  });
  afterEach(async () => t.close());

  const get = (path: string, apiKey = key) => t.app.inject({ url: path, headers: { 'x-api-key': apiKey } });
  const cachedRows = () => t.ctx.database.db.selectFrom('model_scores').selectAll().execute();

  it('answers the reference system test shape: details.models.aggregate.score is a number', async () => {
    const res = await get(`/v2/models/score/${address.toUpperCase().replace('0X', '0x')}?model=aggregate`);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(typeof body.details.models.aggregate.score).toBe('number');
    expect(body).toEqual({ address, details: { models: { aggregate: scoreOf(address) } } });
  });

  it('answers several models, and a cached answer calls the model service once for two requests', async () => {
    const before = example.calls();
    const first = await get(`/v2/models/score/${address}?model=aggregate,second`);
    expect(first.statusCode).toBe(200);
    expect(Object.keys(first.json().details.models)).toEqual(['aggregate', 'second']);
    const again = await get(`/v2/models/score/${address}?model=aggregate`);
    expect(again.json()).toEqual({ address, details: { models: { aggregate: scoreOf(address) } } });
    expect(example.calls() - before).toBe(1);
  });

  it('refuses an unknown model (404), a bad address (400) and a key without read_scores (403)', async () => {
    const unknown = await get(`/v2/models/score/${address}?model=aggregate,nope`);
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toMatchObject({ code: 'model_not_found' });
    expect(unknown.json().detail).toContain('"nope"');
    const bad = await get('/v2/models/score/0x123?model=aggregate');
    expect(bad.statusCode).toBe(400);
    expect(bad.json().code).toBe('invalid_address');
    const writer = (await t.ctx.apiKeys.create((await seedAccount(t.ctx)).account.id, { permissions: ['submit_passports'] })).key;
    const denied = await get(`/v2/models/score/${address}?model=aggregate`, writer);
    expect(denied.statusCode).toBe(403);
    expect(await cachedRows()).toEqual([]);
  });

  it.each(['down', 'slow', 'html', 'huge', 'text', 'big'])('answers 502 naming the model when it is %s, and caches nothing', async (name) => {
    const res = await get(`/v2/models/score/${address}?model=${name}`);
    expect(res.statusCode).toBe(502);
    expect(res.json().code).toBe('upstream_unavailable');
    expect(res.json().detail).toContain(`"${name}"`);
    expect(await cachedRows()).toEqual([]);
  });

  it('fails the whole request when one of several models fails', async () => {
    const res = await get(`/v2/models/score/${address}?model=aggregate,text`);
    expect(res.statusCode).toBe(502);
    expect(res.json().detail).toContain('"text"');
  });
});
