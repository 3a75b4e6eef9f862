import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, seedAccount, type TestApp } from '../helpers/app.js';
import { databaseKinds } from '../helpers/databases.js';
import { testWallet } from '../helpers/stamps.js';
import { asPortal, ORIGIN, type PortalLogin, portalSignIn, signedPortalMessage } from './portal-helpers.js';

const alice = testWallet(401);
const bob = testWallet(402);

describe.each(databaseKinds)('portal sign-in and account routes on %s', (kind) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp(kind);
  });
  afterEach(async () => t.close());

  const call = (login: PortalLogin, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
    t.app.inject({ method, url, headers: asPortal(login, method), ...(payload ? { payload } : {}) });

  describe('sign-in', () => {
    it('creates the wallet\'s account on first sign-in, sets an httpOnly SameSite=Lax cookie, and finds the same account again', async () => {
      const first = await portalSignIn(t.app, alice);
      expect(first.setCookie).toMatch(/^stampgate_portal=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=28800; HttpOnly; SameSite=Lax$/);
      const account = await t.ctx.accounts.accountOfOwner(alice.address);
      expect(account?.id).toBe(first.accountId);
      const second = await portalSignIn(t.app, alice);
      expect(second.accountId).toBe(first.accountId);
      expect(second.cookie).not.toBe(first.cookie);
      expect((await t.ctx.accounts.listAccounts()).length).toBe(1);
      const session = await t.app.inject({ method: 'GET', url: '/v2/account/session', headers: { cookie: first.cookie } });
      expect(session.json()).toMatchObject({ address: alice.address, account_id: String(first.accountId), csrf_token: first.csrf });
      // The database holds a hash of the token, never the token.
      const rows = await t.ctx.database.db.selectFrom('portal_sessions').select('token_hash').execute();
      expect(rows.map((r) => r.token_hash)).not.toContain(first.cookie.split('=')[1]);
    });

    it('refuses a message signed by another wallet, a replayed nonce and a foreign domain, consuming nothing', async () => {
      const signed = await signedPortalMessage(t.app, alice);
      const forged = { message: signed.message, signature: await bob.account.signMessage({ message: signed.message }) };
      const wrong = await t.app.inject({ method: 'POST', url: '/v2/account/session', payload: forged });
      expect(wrong.statusCode).toBe(400);
      expect(wrong.json().code).toBe('invalid_signature');
      expect(wrong.headers['set-cookie']).toBeUndefined();
      expect((await t.ctx.accounts.listAccounts()).length).toBe(0);
      const ok = await t.app.inject({ method: 'POST', url: '/v2/account/session', payload: signed });
      expect(ok.statusCode).toBe(200);
      const replay = await t.app.inject({ method: 'POST', url: '/v2/account/session', payload: signed });
      expect(replay.json().code).toBe('invalid_nonce');
      const foreign = await t.app.inject({ method: 'POST', url: '/v2/account/session', payload: await signedPortalMessage(t.app, alice, { domain: 'evil.example' }) });
      expect(foreign.json().code).toBe('invalid_siwe_message');
    });

    it('signs out: the session ends and the cookie is cleared', async () => {
      const login = await portalSignIn(t.app, alice);
      const withoutToken = await t.app.inject({ method: 'DELETE', url: '/v2/account/session', headers: { cookie: login.cookie, origin: ORIGIN } });
      expect(withoutToken.statusCode).toBe(401);
      const out = await call(login, 'DELETE', '/v2/account/session');
      expect(out.statusCode).toBe(204);
      expect(String(out.headers['set-cookie'])).toMatch(/^stampgate_portal=; Path=\/; Max-Age=0; HttpOnly; SameSite=Lax$/);
      expect((await t.app.inject({ method: 'GET', url: '/v2/account/scorers', headers: { cookie: login.cookie } })).statusCode).toBe(401);
    });
  });

  describe('CSRF defence', () => {
    it('ignores the cookie on a change without X-CSRF-Token, refuses a wrong token or origin, and changes nothing', async () => {
      const login = await portalSignIn(t.app, alice);
      const payload = { name: 'Sneaky' };
      const bare = await t.app.inject({ method: 'POST', url: '/v2/account/scorers', headers: { cookie: login.cookie, origin: ORIGIN }, payload });
      expect(bare.statusCode).toBe(401);
      const badToken = await t.app.inject({ method: 'POST', url: '/v2/account/scorers', headers: { ...asPortal(login, 'POST'), 'x-csrf-token': 'x'.repeat(43) }, payload });
      expect(badToken.statusCode).toBe(403);
      expect(badToken.json().code).toBe('csrf_rejected');
      const crossSite = await t.app.inject({ method: 'POST', url: '/v2/account/scorers', headers: { ...asPortal(login, 'POST'), origin: 'https://evil.example' }, payload });
      expect(crossSite.statusCode).toBe(403);
      const noOrigin = await t.app.inject({ method: 'POST', url: '/v2/account/scorers', headers: { cookie: login.cookie, 'x-csrf-token': login.csrf }, payload });
      expect(noOrigin.statusCode).toBe(403);
      // Another session's token does not fit this cookie.
      const other = await portalSignIn(t.app, alice);
      const swapped = await t.app.inject({ method: 'POST', url: '/v2/account/scorers', headers: { ...asPortal(login, 'POST'), 'x-csrf-token': other.csrf }, payload });
      expect(swapped.statusCode).toBe(403);
      expect(await t.ctx.accounts.listScorers(login.accountId)).toEqual([]);
    });
  });

  describe('scorers', () => {
    it('creates, lists and edits the account\'s scorers (type, threshold, weight overrides); another account\'s are not found', async () => {
      const login = await portalSignIn(t.app, alice);
      const created = await call(login, 'POST', '/v2/account/scorers', { name: 'Airdrop', type: 'binary', threshold: '15.5', weights: { Google: '2.5' } });
      expect(created.statusCode, created.body).toBe(201);
      expect(created.json()).toMatchObject({ name: 'Airdrop', type: 'binary', threshold: '15.5', weights: { Google: '2.5' }, requires_signature: false });
      const id = created.json().id as string;
      const edited = await call(login, 'PATCH', `/v2/account/scorers/${id}`, { threshold: '10', weights: { Discord: '1' } });
      expect(edited.json()).toMatchObject({ id, type: 'binary', threshold: '10', weights: { Discord: '1' } });
      const list = await call(login, 'GET', '/v2/account/scorers');
      expect(list.headers['cache-control']).toBe('private, no-store');
      expect(list.json().items.map((s: { id: string }) => s.id)).toEqual([id]);
      expect((await t.ctx.accounts.getScorer(Number(id))).threshold).toBe('10');

      const intruder = await portalSignIn(t.app, bob);
      const theirs = await call(intruder, 'PATCH', `/v2/account/scorers/${id}`, { threshold: '0' });
      expect(theirs.statusCode).toBe(404);
      expect((await t.ctx.accounts.getScorer(Number(id))).threshold).toBe('10');
      expect((await call(intruder, 'GET', '/v2/account/scorers')).json().items).toEqual([]);
    });

    it('refuses bad input with the standard body', async () => {
      const login = await portalSignIn(t.app, alice);
      for (const payload of [{ name: 'x', type: 'nope' }, { name: 'x', threshold: '-1' }, { name: 'x', weights: { Google: 'lots' } }, { name: '' }, { name: 'x', extra: 1 }]) {
        const res = await call(login, 'POST', '/v2/account/scorers', payload);
        expect(res.statusCode, JSON.stringify(payload)).toBe(400);
        expect(Object.keys(res.json()).sort()).toEqual(['code', 'detail']);
      }
      expect(await t.ctx.accounts.listScorers(login.accountId)).toEqual([]);
    });
  });

  describe('API keys', () => {
    it('creates a key shown once with chosen permissions, which works on the scoring API, and revokes it', async () => {
      const login = await portalSignIn(t.app, alice);
      const scorer = (await call(login, 'POST', '/v2/account/scorers', { name: 'S' })).json();
      const created = await call(login, 'POST', '/v2/account/keys', { name: 'backend', permissions: ['submit_passports', 'historical_endpoint'] });
      expect(created.statusCode).toBe(201);
      expect(created.headers['cache-control']).toBe('private, no-store');
      const { key, prefix } = created.json();
      expect(key.startsWith(`${prefix}.`)).toBe(true);
      expect(created.json()).toMatchObject({ name: 'backend', tier: 1, permissions: ['submit_passports', 'historical_endpoint'], revoked_at: null });
      const listed = (await call(login, 'GET', '/v2/account/keys')).json().items;
      expect(JSON.stringify(listed)).not.toContain(key.split('.')[1]);

      const address = bob.address;
      const submit = await t.app.inject({ method: 'POST', url: '/registry/submit-passport', headers: { 'x-api-key': key }, payload: { address, scorer_id: scorer.id } });
      expect(submit.statusCode, submit.body).toBe(200);
      const read = await t.app.inject({ method: 'GET', url: `/registry/score/${scorer.id}/${address}`, headers: { 'x-api-key': key } });
      expect(read.statusCode).toBe(403);

      const other = await portalSignIn(t.app, bob);
      expect((await call(other, 'DELETE', `/v2/account/keys/${prefix}`)).statusCode).toBe(404);
      const revoked = await call(login, 'DELETE', `/v2/account/keys/${prefix}`);
      expect(revoked.json().revoked_at).not.toBeNull();
      const after = await t.app.inject({ method: 'POST', url: '/registry/submit-passport', headers: { 'x-api-key': key }, payload: { address, scorer_id: scorer.id } });
      expect(after.statusCode).toBe(401);
    });

    it('serves API keys with create_scorers, refuses keys without it, and never lets a key grant more than it has', async () => {
      const seeded = await seedAccount(t.ctx);
      const manager = await t.app.inject({ method: 'GET', url: '/v2/account/scorers', headers: { 'x-api-key': seeded.key } });
      expect(manager.json().items.map((s: { name: string }) => s.name)).toEqual(['Test scorer']);
      const { key: reader } = await t.ctx.apiKeys.create(seeded.account.id, { permissions: ['read_scores'] });
      const refused = await t.app.inject({ method: 'GET', url: '/v2/account/scorers', headers: { 'x-api-key': reader } });
      expect(refused.statusCode).toBe(403);
      expect(refused.json().detail).toContain('create_scorers');
      const escalate = await t.app.inject({ method: 'POST', url: '/v2/account/keys', headers: { 'x-api-key': seeded.key }, payload: { name: 'more', permissions: ['historical_endpoint'] } });
      expect(escalate.statusCode).toBe(403);
      const unknown = await t.app.inject({ method: 'POST', url: '/v2/account/keys', headers: { 'x-api-key': seeded.key }, payload: { name: 'x', permissions: ['root'] } });
      expect(unknown.statusCode).toBe(400);
      expect((await t.ctx.apiKeys.list(seeded.account.id)).length).toBe(2);
    });

    it('lets a portal session use the scoring API of its own account, under its account\'s budget', async () => {
      const login = await portalSignIn(t.app, alice);
      const scorer = (await call(login, 'POST', '/v2/account/scorers', { name: 'S' })).json();
      const submit = await call(login, 'POST', '/registry/submit-passport', { address: bob.address, scorer_id: scorer.id });
      expect(submit.statusCode, submit.body).toBe(200);
      // A new account holds no key: tier 1, as every self-service key.
      expect(submit.headers['ratelimit-limit']).toBe('125');
      const read = await call(login, 'GET', `/registry/score/${scorer.id}/${bob.address}`);
      expect(read.json().address).toBe(bob.address);
      const seeded = await seedAccount(t.ctx);
      const foreign = await call(login, 'GET', `/registry/score/${seeded.scorer.id}/${bob.address}`);
      expect(foreign.statusCode).toBe(404);
      // The batch quota a session spends is its account's.
      const batch = await call(login, 'POST', `/v2/scorers/${scorer.id}/batches`, { addresses: [bob.address, alice.address] });
      expect(batch.statusCode, batch.body).toBe(202);
      const quota = await t.ctx.database.db.selectFrom('batch_usage').select(['account_id', 'addresses']).execute();
      expect(quota.map((row) => [Number(row.account_id), Number(row.addresses)])).toEqual([[login.accountId, 2]]);
    });

    it('lets a key header win over the session cookie, on the API routes and on the session routes', async () => {
      const login = await portalSignIn(t.app, alice);
      const scorer = (await call(login, 'POST', '/v2/account/scorers', { name: 'S' })).json();
      expect((await call(login, 'POST', '/registry/submit-passport', { address: bob.address, scorer_id: scorer.id })).statusCode).toBe(200);
      const url = `/registry/score/${scorer.id}/${bob.address}`;
      expect((await t.app.inject({ method: 'GET', url, headers: { cookie: login.cookie } })).statusCode).toBe(200);
      // A bad key, or an Authorization header that is not a bearer key, is refused even beside a live session.
      for (const header of [{ 'x-api-key': 'not-a-key' }, { authorization: 'Basic YWxpY2U6c2VjcmV0' }]) {
        const refused = await t.app.inject({ method: 'GET', url, headers: { cookie: login.cookie, ...header } });
        expect(refused.statusCode, JSON.stringify(header)).toBe(401);
      }
      // Another account's key reads as that account: the session's scorer is not its own.
      const seeded = await seedAccount(t.ctx);
      const asKey = await t.app.inject({ method: 'GET', url, headers: { cookie: login.cookie, 'x-api-key': seeded.key } });
      expect(asKey.statusCode).toBe(404);
      // Counted in that key's account, not the session's (which has spent three units).
      expect(asKey.headers['ratelimit-remaining']).toBe('124');
      // The session routes read the cookie on their own, under the same rule.
      expect((await t.app.inject({ method: 'GET', url: '/v2/account/session', headers: { cookie: login.cookie } })).statusCode).toBe(200);
      const withKey = await t.app.inject({ method: 'GET', url: '/v2/account/session', headers: { cookie: login.cookie, 'x-api-key': seeded.key } });
      expect(withKey.json().code).toBe('invalid_session');
    });
  });

  describe('usage', () => {
    it('counts each key\'s requests per UTC day, shows unflushed counts at once, and stores them additively', async () => {
      const login = await portalSignIn(t.app, alice);
      const scorer = (await call(login, 'POST', '/v2/account/scorers', { name: 'S' })).json();
      const { key, prefix } = (await call(login, 'POST', '/v2/account/keys', { name: 'k' })).json();
      for (let i = 0; i < 3; i++) {
        await t.app.inject({ method: 'GET', url: `/registry/score/${scorer.id}/${bob.address}`, headers: { 'x-api-key': key } });
      }
      const usage = async () => (await call(login, 'GET', '/v2/account/usage?days=7')).json();
      const before = await usage();
      expect(before.days).toHaveLength(7);
      expect(before.days[6]).toBe(new Date().toISOString().slice(0, 10));
      const series = (u: { keys: { prefix: string; requests: number[] }[] }) => u.keys.find((k) => k.prefix === prefix)!.requests;
      expect(series(before)).toEqual([0, 0, 0, 0, 0, 0, 3]);
      await t.ctx.portal.usage.flush();
      const rows = await t.ctx.database.db.selectFrom('key_usage_daily').selectAll().execute();
      expect(rows.map((r) => Number(r.requests))).toEqual([3]);
      await t.app.inject({ method: 'GET', url: `/registry/score/${scorer.id}/${bob.address}`, headers: { 'x-api-key': key } });
      await t.ctx.portal.usage.flush();
      expect(series(await usage())).toEqual([0, 0, 0, 0, 0, 0, 4]);
      expect((await call(login, 'GET', '/v2/account/usage?days=91')).statusCode).toBe(400);
    });
  });
});
