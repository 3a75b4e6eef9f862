import type { Hex } from 'viem';
import { createSiweMessage } from 'viem/siwe';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WALLET_ADDRESS_BUDGET, WALLET_IP_BUDGET } from '../../../../src/scoring/wallet/routes/wallet.js';
import { issueCredential } from '../../../../src/scoring/stamps/dev-issuer.js';
import { createTestApp, seedAccount, type TestApp } from '../../../helpers/app.js';
import { databaseKinds } from '../../../helpers/databases.js';
import { testWallet } from '../../../helpers/stamps.js';

// Catalogue weights: Google 0.525, Discord 0.516, Linkedin 1.531 (assets/stamp-catalogue.json).
const day = 86_400_000;
/** For the tests that make hundreds of requests or wait for scoring. */
const heavy = 60_000;
const alice = testWallet(301);
const bob = testWallet(302);
const STRANGER_KEY: Hex = '0x8da4ef21b864d2cc526dbdb2a120bd2874c36c9d0a1fb7f8c63d7f7a8b41de8f';

type Wallet = typeof alice;

describe.each(databaseKinds)('wallet routes on %s', (kind) => {
  let t: TestApp;

  beforeEach(async () => {
    t = await createTestApp(kind);
  });
  afterEach(async () => t.close());

  const credential = (address: string, provider: string, options: { nullifiers?: string[]; key?: Hex; expiresInMs?: number } = {}) =>
    issueCredential({
      privateKey: options.key ?? t.ctx.devIssuerKey!,
      address,
      provider,
      nullifiers: options.nullifiers,
      issuedAt: new Date(),
      expiresAt: new Date(Date.now() + (options.expiresInMs ?? 90 * day)),
    });

  async function signedMessage(who: Wallet, overrides: Partial<Parameters<typeof createSiweMessage>[0]> = {}, headers: Record<string, string> = {}) {
    const offer = (await t.app.inject({ method: 'GET', url: '/registry/wallet/siwe-nonce', headers })).json();
    const message = createSiweMessage({
      address: who.account.address,
      chainId: offer.chainId,
      domain: offer.domain,
      nonce: offer.nonce,
      uri: offer.uri,
      statement: offer.statement,
      version: '1',
      issuedAt: new Date(),
      expirationTime: new Date(offer.expiresAt),
      ...overrides,
    });
    return { message, signature: await who.account.signMessage({ message }) };
  }

  async function postSession(body: { message: string; signature: string }, headers: Record<string, string> = {}) {
    return t.app.inject({ method: 'POST', url: '/registry/wallet/session', headers, payload: body });
  }

  async function signIn(who: Wallet): Promise<string> {
    const res = await postSession(await signedMessage(who));
    expect(res.statusCode).toBe(200);
    return res.json().token as string;
  }

  function stamps(method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', token: string | null, payload?: unknown) {
    return t.app.inject({
      method,
      url: '/registry/wallet/stamps',
      headers: token === null ? {} : { authorization: `Bearer ${token}` },
      ...(payload !== undefined ? { payload: payload as Record<string, unknown> } : {}),
    });
  }

  const liveProviders = async (address: string) =>
    (await t.ctx.stamps.listForOperator(address)).filter((s) => s.state === 'live').map((s) => s.provider).sort();

  describe('sign-in', () => {
    it('offers a nonce for this host without an API key, and signs in with it', async () => {
      const offer = await t.app.inject({ method: 'GET', url: '/registry/wallet/siwe-nonce', headers: { host: 'wallet.test:8000' } });
      expect(offer.statusCode).toBe(200);
      expect(offer.json()).toEqual({
        nonce: expect.stringMatching(/^[0-9a-f]{64}$/),
        domain: 'wallet.test:8000',
        uri: 'http://wallet.test:8000',
        chainId: 1,
        statement: expect.any(String),
        expiresAt: expect.stringMatching(/\+00:00$/),
      });

      const res = await postSession(await signedMessage(alice, {}, { host: 'wallet.test:8000' }), { host: 'wallet.test:8000' });
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(body).toEqual({ token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), address: alice.address, expiresAt: expect.stringMatching(/\+00:00$/) });
      const ttl = new Date(body.expiresAt).getTime() - Date.now();
      expect(ttl).toBeGreaterThan(890_000);
      expect(ttl).toBeLessThanOrEqual(900_000);

      const mine = await stamps('GET', body.token);
      expect(mine.statusCode).toBe(200);
      expect(mine.json()).toEqual({ address: alice.address, items: [] });
    });

    it('refuses a message for another domain, another URI origin, an expired one and one without expiry', async () => {
      const cases: [Partial<Parameters<typeof createSiweMessage>[0]>, RegExp][] = [
        [{ domain: 'evil.example' }, /is for "evil.example", not for this service/],
        [{ uri: 'https://evil.example/' }, /URI must be on http:\/\/localhost/],
        [{ issuedAt: new Date(Date.now() - 3_600_000), expirationTime: new Date(Date.now() - 1000) }, /expired at/],
        [{ expirationTime: undefined }, /must have an Expiration Time/],
        [{ issuedAt: new Date(Date.now() + 3_600_000), expirationTime: new Date(Date.now() + 7_200_000) }, /Issued At lies in the future/],
      ];
      for (const [overrides, detail] of cases) {
        const res = await postSession(await signedMessage(alice, overrides));
        expect(res.statusCode).toBe(400);
        expect(res.json()).toEqual({ code: 'invalid_siwe_message', detail: expect.stringMatching(detail) });
      }
      const res = await postSession({ message: 'Sign in, please', signature: '0x00' });
      expect(res.json()).toEqual({ code: 'invalid_siwe_message', detail: expect.stringMatching(/not a Sign-In with Ethereum/) });
      const rows = await t.ctx.database.db.selectFrom('wallet_sessions').selectAll().execute();
      expect(rows).toEqual([]);
    });

    it('refuses a reused nonce', async () => {
      const signed = await signedMessage(alice);
      expect((await postSession(signed)).statusCode).toBe(200);
      const again = await postSession(signed);
      expect(again.statusCode).toBe(400);
      expect(again.json().code).toBe('invalid_nonce');
    });

    it('refuses a message naming someone else’s address, signed by another key, and keeps its nonce usable', async () => {
      const honest = await signedMessage(alice);
      const forged = { message: honest.message, signature: await bob.account.signMessage({ message: honest.message }) };
      const res = await postSession(forged);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ code: 'invalid_signature', detail: expect.stringContaining('not made by the message\'s address') });
      expect((await postSession(honest)).json().address).toBe(alice.address);
    });

    it('takes the domain from PUBLIC_BASE_URL when it is set, whatever the Host header says', async () => {
      await t.close();
      t = await createTestApp(kind, { PUBLIC_BASE_URL: 'https://passport.example.org/stampgate' });
      const headers = { host: 'evil.example' };
      const offer = (await t.app.inject({ method: 'GET', url: '/registry/wallet/siwe-nonce', headers })).json();
      expect(offer).toMatchObject({ domain: 'passport.example.org', uri: 'https://passport.example.org/stampgate' });
      expect((await postSession(await signedMessage(alice, {}, headers), headers)).statusCode).toBe(200);
      const spoofed = await postSession(await signedMessage(alice, { domain: 'evil.example', uri: 'http://evil.example/' }, headers), headers);
      expect(spoofed.json().code).toBe('invalid_siwe_message');
    });

    it('refuses to serve in production without PUBLIC_BASE_URL (the SIWE domain would come from the Host header)', async () => {
      await expect(createTestApp(kind, { STAMPGATE_ENV: 'production' })).rejects.toThrow(/PUBLIC_BASE_URL must be set in production/);
      const configured = await createTestApp(kind, { STAMPGATE_ENV: 'production', PUBLIC_BASE_URL: 'https://passport.example.org' });
      expect((await configured.app.inject('/registry/wallet/siwe-nonce')).json()).toMatchObject({ domain: 'passport.example.org' });
      await configured.close();
    });

    it('validates the body and refuses missing, unknown and signed-out tokens with 401 invalid_session', async () => {
      expect((await postSession({ message: 'x' } as never)).json()).toMatchObject({ code: 'invalid_request' });

      const missing = await stamps('GET', null);
      expect(missing.statusCode).toBe(401);
      expect(missing.json()).toEqual({ code: 'invalid_session', detail: expect.stringContaining('Authorization: Bearer') });
      expect((await stamps('GET', 'A'.repeat(43))).json()).toEqual({ code: 'invalid_session', detail: expect.stringContaining('unknown or expired') });
      // The session is required before the body is looked at.
      expect((await stamps('POST', null, { credentials: 'nonsense' })).statusCode).toBe(401);
      // An API key is not a session.
      const { key } = await seedAccount(t.ctx);
      expect((await t.app.inject({ method: 'GET', url: '/registry/wallet/stamps', headers: { 'x-api-key': key } })).statusCode).toBe(401);

      const token = await signIn(alice);
      const out = await t.app.inject({ method: 'DELETE', url: '/registry/wallet/session', headers: { authorization: `Bearer ${token}` } });
      expect(out.statusCode).toBe(204);
      expect((await stamps('GET', token)).statusCode).toBe(401);
    });
  });

  describe('stamps', () => {
    it('adds up to 100 credentials, reporting bad ones by index and storing good ones', async () => {
      const token = await signIn(alice);
      const res = await stamps('POST', token, {
        credentials: [
          credential(alice.address, 'Google'),
          credential(alice.address, 'Discord', { key: STRANGER_KEY }),
          credential(bob.address, 'Linkedin'),
          { hello: 'world' },
          credential(alice.address, 'Linkedin'),
        ],
      });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({
        stored: 2,
        unchanged: 0,
        rejected: 3,
        deleted: 0,
        results: [
          { index: 0, status: 'stored', provider: 'Google' },
          { index: 1, status: 'rejected', provider: 'Discord', reason: 'issuer is not trusted' },
          { index: 2, status: 'rejected', provider: 'Linkedin', reason: 'credential subject is a different address' },
          { index: 3, status: 'rejected', reason: expect.any(String) },
          { index: 4, status: 'stored', provider: 'Linkedin' },
        ],
      });
      expect(await liveProviders(alice.address)).toEqual(['Google', 'Linkedin']);
      expect(await liveProviders(bob.address)).toEqual([]);

      const hundred = Array.from({ length: 100 }, (_, i) => credential(alice.address, `P${i}`));
      const ok = await stamps('POST', token, { credentials: hundred });
      expect(ok.statusCode).toBe(200);
      expect(ok.json().stored).toBe(100);

      const tooMany = await stamps('POST', token, { credentials: [...hundred, credential(alice.address, 'P100')] });
      expect(tooMany.statusCode).toBe(400);
      expect(tooMany.json()).toEqual({ code: 'invalid_request', detail: expect.stringContaining('100') });
      expect((await stamps('POST', token, { credentials: [] })).statusCode).toBe(400);
      expect((await stamps('POST', token, { credentials: [1] })).statusCode).toBe(400);
    }, heavy);

    it('lists the session’s own live stamps', async () => {
      const token = await signIn(alice);
      const google = credential(alice.address, 'Google');
      await stamps('POST', token, { credentials: [google] });
      await t.ctx.stamps.importCredentials([credential(bob.address, 'Discord')]);
      const res = (await stamps('GET', token)).json();
      expect(res.address).toBe(alice.address);
      expect(res.items.map((i: { provider: string }) => i.provider)).toEqual(['Google']);
      expect(res.items[0].credential).toEqual(google);
    });

    it('never lets a token for one address delete another’s stamps', async () => {
      await t.ctx.stamps.importCredentials([credential(bob.address, 'Google'), credential(bob.address, 'Discord')]);
      const aliceToken = await signIn(alice);
      const res = await stamps('DELETE', aliceToken, { providers: ['Google', 'Discord'] });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ deleted: 0 });
      // Replacing Alice's whole set touches none of Bob's either.
      expect((await stamps('PUT', aliceToken, { credentials: [] })).json().deleted).toBe(0);
      expect(await liveProviders(bob.address)).toEqual(['Discord', 'Google']);

      const bobToken = await signIn(bob);
      expect((await stamps('DELETE', bobToken, { providers: ['Google'] })).json()).toEqual({ deleted: 1 });
      expect(await liveProviders(bob.address)).toEqual(['Discord']);
      expect((await stamps('DELETE', bobToken, { providers: [] })).statusCode).toBe(400);
      // A NUL cannot reach the database (PostgreSQL text refuses it): a clean 400, also when coerced from a string.
      for (const providers of [['Goo\u0000gle'], '\u0000']) {
        const res = await stamps('DELETE', bobToken, { providers });
        expect(res.statusCode).toBe(400);
        expect(res.json().code).toBe('invalid_request');
      }
    });

    it('replaces the whole set with PUT and provider by provider with PATCH', async () => {
      const token = await signIn(alice);
      const google = credential(alice.address, 'Google', { nullifiers: ['g1'] });
      await stamps('POST', token, { credentials: [google, credential(alice.address, 'Discord'), credential(alice.address, 'Linkedin')] });

      const patched = await stamps('PATCH', token, {
        credentials: [credential(alice.address, 'Google', { nullifiers: ['g2'] }), credential(alice.address, 'Discord', { key: STRANGER_KEY })],
      });
      expect(patched.json()).toMatchObject({ stored: 1, rejected: 1, deleted: 1 });
      expect(await liveProviders(alice.address)).toEqual(['Discord', 'Google', 'Linkedin']);

      const put = await stamps('PUT', token, { credentials: [credential(alice.address, 'Github')] });
      expect(put.json()).toMatchObject({ stored: 1, deleted: 3, results: [{ index: 0, status: 'stored', provider: 'Github' }] });
      expect(await liveProviders(alice.address)).toEqual(['Github']);
    });

    it('a deleted stamp stops counting at the next scoring, and its nullifier stays held against other addresses', async () => {
      t.ctx.worker.start();
      const { key, scorer } = await seedAccount(t.ctx);
      // Submits and, should scoring outlast SUBMIT_WAIT_MS (a loaded machine), polls until DONE.
      const submit = async (address: string) => {
        const headers = { 'x-api-key': key };
        let record = (
          await t.app.inject({ method: 'POST', url: '/registry/submit-passport', headers, payload: { address, scorer_id: String(scorer.id) } })
        ).json();
        for (let i = 0; record.status === 'PROCESSING' && i < 200; i++) {
          await new Promise((resolve) => setTimeout(resolve, 100));
          record = (await t.app.inject({ method: 'GET', url: `/registry/score/${scorer.id}/${address}`, headers })).json().items[0];
        }
        return record;
      };

      const aliceToken = await signIn(alice);
      await stamps('POST', aliceToken, {
        credentials: [credential(alice.address, 'Google', { nullifiers: ['one-google-account'] }), credential(alice.address, 'Discord')],
      });
      expect((await submit(alice.address)).score).toBe('1.04100');

      expect((await stamps('DELETE', aliceToken, { providers: ['Google'] })).json()).toEqual({ deleted: 1 });
      expect((await submit(alice.address)).score).toBe('0.51600');

      // The same Google account moved to Bob: the hold Alice took lasts until the stamp's expiry.
      const bobToken = await signIn(bob);
      const added = await stamps('POST', bobToken, {
        credentials: [credential(bob.address, 'Google', { nullifiers: ['one-google-account'] }), credential(bob.address, 'Linkedin')],
      });
      expect(added.json().stored).toBe(2);
      expect((await submit(bob.address)).score).toBe('1.53100');
      const holds = await t.ctx.database.db.selectFrom('nullifier_holds').select(['nullifier', 'address']).where('nullifier', '=', 'one-google-account').execute();
      expect(holds).toEqual([{ nullifier: 'one-google-account', address: alice.address }]);
    }, heavy);
  });

  describe('rate limit', () => {
    it('budgets requests per IP before sign-in and per address after', async () => {
      const token = await signIn(alice);
      const authed = await stamps('GET', token);
      expect(authed.headers['ratelimit-limit']).toBe(String(WALLET_ADDRESS_BUDGET));

      const first = await t.app.inject({ method: 'GET', url: '/registry/wallet/stamps', remoteAddress: '203.0.113.9' });
      expect(first.headers['ratelimit-limit']).toBe(String(WALLET_IP_BUDGET));
      for (let i = 1; i < WALLET_IP_BUDGET; i++) {
        await t.app.inject({ method: 'GET', url: '/registry/wallet/stamps', headers: { authorization: 'Bearer nope' }, remoteAddress: '203.0.113.9' });
      }
      const limited = await t.app.inject({ method: 'GET', url: '/registry/wallet/siwe-nonce', remoteAddress: '203.0.113.9' });
      expect(limited.statusCode).toBe(429);
      expect(limited.json().code).toBe('rate_limited');
      expect(limited.headers['retry-after']).toBeDefined();
      expect((await t.app.inject('/metrics')).body).toMatch(/^stampgate_rate_limit_rejections_total\{tier="wallet"\} 1$/m);
      // Another IP, and a signed-in address, have budgets of their own.
      expect((await t.app.inject({ method: 'GET', url: '/registry/wallet/siwe-nonce', remoteAddress: '203.0.113.10' })).statusCode).toBe(200);
      expect(
        (await t.app.inject({ method: 'GET', url: '/registry/wallet/stamps', headers: { authorization: `Bearer ${token}` }, remoteAddress: '203.0.113.9' })).statusCode,
      ).toBe(200);
    }, heavy);
  });

  it('is documented in the OpenAPI document with its schemas', async () => {
    const doc = (await t.app.inject('/openapi.json')).json();
    const paths = doc.paths;
    expect(Object.keys(paths['/registry/wallet/stamps']).sort()).toEqual(['delete', 'get', 'patch', 'post', 'put']);
    expect(Object.keys(paths['/registry/wallet/session']).sort()).toEqual(['delete', 'post']);
    const nonce = paths['/registry/wallet/siwe-nonce'].get;
    expect(nonce.security).toEqual([]);
    expect(nonce.responses['200'].content['application/json'].schema.required).toEqual(['nonce', 'domain', 'uri', 'chainId', 'statement', 'expiresAt']);
    const signInOp = paths['/registry/wallet/session'].post;
    expect(signInOp.requestBody.content['application/json'].schema.required).toEqual(['message', 'signature']);
    expect(signInOp.responses['200'].content['application/json'].schema.required).toEqual(['token', 'address', 'expiresAt']);
    const add = paths['/registry/wallet/stamps'].post;
    expect(add.requestBody.content['application/json'].schema.properties.credentials.maxItems).toBe(100);
    expect(add.responses['200'].content['application/json'].schema.properties.results.items.required).toEqual(['index', 'status']);
    expect(JSON.stringify(add.responses['401'])).toContain('ErrorBody');
    expect(paths['/registry/wallet/stamps'].delete.requestBody.content['application/json'].schema.required).toEqual(['providers']);
    expect(doc.components.securitySchemes.walletSession).toMatchObject({ type: 'http', scheme: 'bearer' });
    const sessionOps = [...Object.values(paths['/registry/wallet/stamps']), paths['/registry/wallet/session'].delete] as Record<string, any>[];
    for (const op of sessionOps) {
      expect(op.tags).toEqual(['wallet']);
      expect(op.description).toContain('Authorization: Bearer <session token>');
      expect(op.security).toEqual([{ walletSession: [] }]);
      expect(op.security ?? []).not.toContainEqual({ apiKey: [] });
    }
  });
});
