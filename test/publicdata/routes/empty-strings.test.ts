import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { databaseKinds } from '../../helpers/databases.js';
import { bountyFixtures, grantFixtures, importOk, profileFixtures } from '../fixtures.js';

/** decisions.md "Empty strings are absent": an empty optional query parameter means "not given" here too. */
describe.each(databaseKinds)('empty optional query parameters on the public data API on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(kind, { PUBLIC_CACHE_TTL: '0' });
    await importOk(t.ctx, { profiles: profileFixtures, grants: grantFixtures, bounties: bountyFixtures() });
  });
  afterAll(async () => t.close());

  it('answers the bounty list with its defaults for ?limit=', async () => {
    const empty = await t.app.inject('/api/v0.1/bounties/?limit=');
    expect(empty.statusCode, empty.body).toBe(200);
    const plain = await t.app.inject('/api/v0.1/bounties/');
    // Each bounty carries the time of the answer (`now`); the rest is the same.
    const pks = (res: typeof plain) => (res.json() as { pk: number }[]).map((b) => b.pk);
    expect(pks(plain).length).toBeGreaterThan(0);
    expect(pks(empty)).toEqual(pks(plain));
    // An empty filter is no filter either (is_open= has no documented meaning of its own).
    const noFilter = await t.app.inject('/api/v0.1/bounties/?is_open=&limit=');
    expect(noFilter.statusCode, noFilter.body).toBe(200);
    expect(pks(noFilter)).toEqual(pks(plain));
  });

  it('answers the grant list with its defaults for ?limit=&offset=&pk=', async () => {
    const empty = await t.app.inject('/api/v0.1/grants/?limit=&offset=&pk=');
    expect(empty.statusCode, empty.body).toBe(200);
    const plain = await t.app.inject('/api/v0.1/grants/');
    expect(plain.json().length).toBeGreaterThan(0);
    expect(empty.json()).toEqual(plain.json());
  });

  it('still refuses a required or malformed value with the standard body', async () => {
    const bad = await t.app.inject('/api/v0.1/grants/?limit=abc');
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toEqual({ detail: expect.any(String), code: expect.any(String) });
  });
});
