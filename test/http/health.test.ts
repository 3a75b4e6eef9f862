import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { databaseKinds } from '../helpers/databases.js';

describe.each(databaseKinds)('health on %s', (kind) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp(kind);
  });
  afterEach(async () => t.close());

  it('is live and ready without an API key', async () => {
    expect((await t.app.inject('/health/live')).json()).toEqual({ status: 'ok' });
    const ready = await t.app.inject('/health/ready');
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({ status: 'ok' });
  });

  it('is not ready (503, standard body) when the database is unreachable', async () => {
    await t.ctx.database.close();
    const res = await t.app.inject('/health/ready');
    expect(res.statusCode).toBe(503);
    expect(res.json()).toEqual({ detail: 'The database is not reachable.', code: 'not_ready' });
    expect((await t.app.inject('/health/live')).statusCode).toBe(200);
    t.ctx.database.close = async () => {};
  });
});
