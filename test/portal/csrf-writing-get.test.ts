import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { databaseKinds } from '../helpers/databases.js';
import { giveStamps, testWallet } from '../helpers/stamps.js';
import { ORIGIN, type PortalLogin, portalSignIn } from './portal-helpers.js';

const owner = testWallet(481);
const someone = testWallet(482);

// A GET that writes (the v2 score read records the score and may fire webhooks; the signing
// message stores a nonce) must not be callable by another site that only has the browser send
// the portal cookie: such a request needs the session's CSRF token, like a POST.
describe.each(databaseKinds)('portal cookies on GET routes that change state, on %s', (kind) => {
  let t: TestApp;
  let login: PortalLogin;
  let scoreUrl: string;
  beforeEach(async () => {
    t = await createTestApp(kind);
    login = await portalSignIn(t.app, owner);
    const scorer = await t.ctx.accounts.createScorer(login.accountId, { name: 'Portal scorer', type: 'weighted' });
    await giveStamps(t.ctx, someone.address, ['Google']);
    scoreUrl = `/v2/stamps/${scorer.id}/score/${someone.address}`;
  });
  afterEach(async () => t.close());

  const scoreRows = async () => (await t.ctx.database.db.selectFrom('scores').select('address').execute()).length;
  const crossSite = { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'no-cors' };

  it('refuses a cross-site score read carrying only the cookie (403, standard body), and records nothing', async () => {
    const refused = await t.app.inject({ url: scoreUrl, headers: { cookie: login.cookie, ...crossSite } });
    expect(refused.statusCode, refused.body).toBe(403);
    expect(refused.json()).toEqual({ detail: expect.stringContaining('X-CSRF-Token'), code: 'csrf_rejected' });
    expect(await scoreRows()).toBe(0);
    // A wrong token, or the right one from a foreign page, is refused as well.
    const wrong = await t.app.inject({ url: scoreUrl, headers: { cookie: login.cookie, 'x-csrf-token': 'x'.repeat(43) } });
    expect(wrong.json().code).toBe('csrf_rejected');
    const foreign = await t.app.inject({ url: scoreUrl, headers: { cookie: login.cookie, 'x-csrf-token': login.csrf, origin: 'https://evil.example' } });
    expect(foreign.json().code).toBe('csrf_rejected');
    expect(await scoreRows()).toBe(0);
  });

  it('serves the portal\'s own score read, which sends the token (with or without its Origin)', async () => {
    const own = await t.app.inject({ url: scoreUrl, headers: { cookie: login.cookie, 'x-csrf-token': login.csrf, 'sec-fetch-site': 'same-origin' } });
    expect(own.statusCode, own.body).toBe(200);
    expect(own.json().address).toBe(someone.address);
    const withOrigin = await t.app.inject({ url: scoreUrl, headers: { cookie: login.cookie, 'x-csrf-token': login.csrf, origin: ORIGIN } });
    expect(withOrigin.statusCode, withOrigin.body).toBe(200);
    expect(await scoreRows()).toBe(1);
  });

  it('asks the token of a cookie for the signing message (it stores a nonce) too', async () => {
    const nonces = async () => (await t.ctx.database.db.selectFrom('nonces').select('nonce').execute()).length;
    const refused = await t.app.inject({ url: '/registry/signing-message', headers: { cookie: login.cookie, ...crossSite } });
    expect(refused.statusCode, refused.body).toBe(403);
    expect(refused.json().code).toBe('csrf_rejected');
    expect(await nonces()).toBe(0);
    const own = await t.app.inject({ url: '/registry/signing-message', headers: { cookie: login.cookie, 'x-csrf-token': login.csrf } });
    expect(own.statusCode, own.body).toBe(200);
  });

  it('leaves GET routes that only read as they were: the cookie alone reads them', async () => {
    const read = await t.app.inject({ url: '/v2/account/scorers', headers: { cookie: login.cookie } });
    expect(read.statusCode, read.body).toBe(200);
  });
});
