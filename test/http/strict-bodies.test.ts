/**
 * JSON body fields are taken only in their declared types (decisions.md, "Strict bodies"): a
 * value of another type is 400 with the standard body and changes nothing, never coerced. Query
 * strings and path parameters are text and are still parsed into their declared types; scorer_id
 * (and v1's community) in a body is taken as text or as a JSON integer.
 */
import type { LightMyRequestResponse } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { issueCredential } from '../../src/scoring/stamps/dev-issuer.js';
import { createTestApp, seedAccount, type TestApp } from '../helpers/app.js';
import { databaseKinds } from '../helpers/databases.js';
import { testWallet } from '../helpers/stamps.js';
import { asPortal, portalSignIn, signedPortalMessage } from '../portal/portal-helpers.js';

const addressNo = (n: number) => '0x' + n.toString(16).padStart(40, '0');
const owner = testWallet(811);
const holder = testWallet(812);

type Table = 'scores' | 'score_events' | 'scoring_jobs' | 'batches' | 'batch_items' | 'webhook_endpoints' | 'scorers' | 'api_keys' | 'stamps';

function expectRefused(res: LightMyRequestResponse): void {
  expect(res.statusCode, res.body).toBe(400);
  const body = res.json();
  expect(Object.keys(body).sort()).toEqual(['code', 'detail']);
  expect(body.detail).toEqual(expect.any(String));
  expect(body.code).toMatch(/^(invalid_request|invalid_address)$/);
}

describe.each(databaseKinds)('strict JSON bodies on %s', (kind) => {
  let t: TestApp;
  let key: string;
  let scorerId: number;

  beforeEach(async () => {
    t = await createTestApp(kind, { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' });
    const seeded = await seedAccount(t.ctx);
    key = seeded.key;
    scorerId = seeded.scorer.id;
  });
  afterEach(async () => t.close());

  const rows = async (table: Table) =>
    Number((await t.ctx.database.db.selectFrom(table as 'scores').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
  const withKey = (method: 'POST' | 'GET', url: string, payload?: unknown) =>
    t.app.inject({ method, url, headers: { 'x-api-key': key }, ...(payload === undefined ? {} : { payload: payload as object }) });

  it('refuses a scalar where the v2 synchronous batch declares an array, and one address list item of another type; nothing is scored', async () => {
    for (const body of [{ addresses: addressNo(1) }, { addresses: [addressNo(1), 2] }, { addresses: [[addressNo(1)]] }]) {
      expectRefused(await withKey('POST', `/v2/stamps/${scorerId}/scores`, body));
    }
    expect(await rows('scores')).toBe(0);
    expect(await rows('score_events')).toBe(0);
    const ok = await withKey('POST', `/v2/stamps/${scorerId}/scores`, { addresses: [addressNo(1)] });
    expect(ok.statusCode, ok.body).toBe(200);
  });

  it('refuses a scalar address list for a queued batch (JSON body); nothing is queued', async () => {
    expectRefused(await withKey('POST', `/v2/scorers/${scorerId}/batches`, { addresses: addressNo(1) }));
    expect(await rows('batches')).toBe(0);
    expect(await rows('batch_items')).toBe(0);
  });

  it('refuses submit-passport fields of another type, records nothing, and takes scorer_id and community as text or integer', async () => {
    const address = addressNo(7);
    for (const body of [
      { address: [address], scorer_id: String(scorerId) },
      { address, scorer_id: [String(scorerId)] },
      { address, scorer_id: true },
      { address, scorer_id: null },
      { address, scorer_id: 1.5 },
      { address, community: [scorerId] },
      { address, scorer_id: String(scorerId), signature: 12345 },
      { address, scorer_id: String(scorerId), nonce: ['abc'] },
    ]) {
      expectRefused(await withKey('POST', '/registry/submit-passport', body));
    }
    expect(await rows('scores')).toBe(0);
    expect(await rows('scoring_jobs')).toBe(0);
    for (const [n, body] of [
      { scorer_id: String(scorerId) },
      { scorer_id: scorerId },
      { community: String(scorerId) },
      { community: scorerId },
    ].entries()) {
      const res = await withKey('POST', '/registry/submit-passport', { address: addressNo(100 + n), ...body });
      expect(res.statusCode, JSON.stringify(body) + res.body).toBe(200);
      expect(res.json().address).toBe(addressNo(100 + n));
    }
    expect(await rows('scores')).toBe(4);
  });

  it('refuses webhook registration fields of another type; no endpoint is made', async () => {
    const url = `/v2/scorers/${scorerId}/webhooks`;
    for (const body of [
      { url: 'http://127.0.0.1:9/hook', events: 'score.updated' },
      { url: ['http://127.0.0.1:9/hook'], events: ['score.updated'] },
      { url: 'http://127.0.0.1:9/hook', events: ['score.updated'], description: 42 },
    ]) {
      expectRefused(await withKey('POST', url, body));
    }
    expect(await rows('webhook_endpoints')).toBe(0);
    expect((await withKey('POST', url, { url: 'http://127.0.0.1:9/hook', events: ['score.updated'] })).statusCode).toBe(201);
  });

  it('refuses account API fields of another type (scorers, keys); nothing is created or changed', async () => {
    const login = await portalSignIn(t.app, owner);
    const call = (method: 'POST' | 'PATCH', url: string, payload: object) => t.app.inject({ method, url, headers: asPortal(login, method), payload });
    const scorersBefore = await rows('scorers');
    const keysBefore = await rows('api_keys');
    for (const body of [{ name: 7 }, { name: 'S', threshold: 25 }, { name: 'S', requires_signature: 'true' }, { name: 'S', weights: { Google: 2.5 } }]) {
      expectRefused(await call('POST', '/v2/account/scorers', body));
    }
    for (const body of [{ name: 12 }, { name: 'K', permissions: 'read_scores' }]) {
      expectRefused(await call('POST', '/v2/account/keys', body));
    }
    expect(await rows('scorers')).toBe(scorersBefore);
    expect(await rows('api_keys')).toBe(keysBefore);

    const created = await call('POST', '/v2/account/scorers', { name: 'S', threshold: '25', requires_signature: true });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().id as string;
    expectRefused(await call('PATCH', `/v2/account/scorers/${id}`, { requires_signature: 0 }));
    expectRefused(await call('PATCH', `/v2/account/scorers/${id}`, { threshold: 30 }));
    const scorer = await t.ctx.database.db.selectFrom('scorers').select(['threshold', 'requires_signature']).where('id', '=', Number(id)).executeTakeFirstOrThrow();
    expect(String(scorer.threshold)).toBe('25');
    expect(Boolean(scorer.requires_signature)).toBe(true);
    expect((await call('POST', '/v2/account/keys', { name: 'K', permissions: ['read_scores'] })).statusCode).toBe(201);

    // Sign-in bodies too: a message as an array of one string was taken as the string.
    const signed = await signedPortalMessage(t.app, owner);
    expectRefused(await t.app.inject({ method: 'POST', url: '/v2/account/session', payload: { message: [signed.message], signature: signed.signature } }));
  });

  it('refuses wallet route bodies of another type; no stamp is stored or deleted', async () => {
    const offer = (await t.app.inject({ url: '/registry/wallet/siwe-nonce' })).json();
    const { createSiweMessage } = await import('viem/siwe');
    const message = createSiweMessage({
      address: holder.account.address,
      chainId: offer.chainId,
      domain: offer.domain,
      nonce: offer.nonce,
      uri: offer.uri,
      version: '1',
      issuedAt: new Date(),
      expirationTime: new Date(offer.expiresAt),
    });
    const signature = await holder.account.signMessage({ message });
    expectRefused(await t.app.inject({ method: 'POST', url: '/registry/wallet/session', payload: { message, signature: [signature] } }));
    const session = await t.app.inject({ method: 'POST', url: '/registry/wallet/session', payload: { message, signature } });
    expect(session.statusCode, session.body).toBe(200);
    const bearer = { authorization: `Bearer ${session.json().token}` };
    const credential = issueCredential({
      privateKey: t.ctx.devIssuerKey!,
      address: holder.address,
      provider: 'Google',
      issuedAt: new Date(),
      expiresAt: new Date(Date.now() + 86_400_000),
    });
    for (const method of ['POST', 'PUT', 'PATCH'] as const) {
      expectRefused(await t.app.inject({ method, url: '/registry/wallet/stamps', headers: bearer, payload: { credentials: credential } }));
    }
    expect(await rows('stamps')).toBe(0);
    const stored = await t.app.inject({ method: 'POST', url: '/registry/wallet/stamps', headers: bearer, payload: { credentials: [credential] } });
    expect(stored.statusCode, stored.body).toBe(200);
    expectRefused(await t.app.inject({ method: 'DELETE', url: '/registry/wallet/stamps', headers: bearer, payload: { providers: 'Google' } }));
    const live = await t.ctx.database.db.selectFrom('stamps').select('deleted_at').execute();
    expect(live.map((row) => row.deleted_at)).toEqual([null]);
  });

  it('still parses query strings and path parameters into their declared types', async () => {
    await withKey('POST', '/registry/submit-passport', { address: addressNo(1), scorer_id: scorerId });
    const list = await withKey('GET', `/registry/score/${scorerId}?limit=5&offset=0`);
    expect(list.statusCode, list.body).toBe(200);
    expect(list.json().count).toBe(1);
    const bad = await withKey('GET', `/registry/score/${scorerId}?limit=five`);
    expect(bad.statusCode).toBe(400);
    expect(bad.json().code).toBe('invalid_limit');
    const login = await portalSignIn(t.app, owner);
    const usage = await t.app.inject({ url: '/v2/account/usage?days=5', headers: asPortal(login, 'GET') });
    expect(usage.statusCode, usage.body).toBe(200);
    expect(usage.json().days).toHaveLength(5);
  });
});
