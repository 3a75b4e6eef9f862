import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, seedAccount, type TestApp } from '../../../helpers/app.js';
import { databaseKinds } from '../../../helpers/databases.js';
import { issueCredential, issuerDidFromPrivateKey } from '../../../../src/scoring/stamps/dev-issuer.js';
import { giveStamps, testWallet } from '../../../helpers/stamps.js';

// Catalogue weights: Google 0.525, Discord 0.516, Linkedin 1.531 (assets/stamp-catalogue.json).
const address = '0x' + 'ab'.repeat(20);
const other = '0x' + 'cd'.repeat(20);

describe.each(databaseKinds)('POST /registry/submit-passport on %s', (kind) => {
  let t: TestApp;
  let key: string;
  let scorerId: number;
  let accountId: number;

  async function submit(body: Record<string, unknown>, apiKey = key) {
    return t.app.inject({ method: 'POST', url: '/registry/submit-passport', headers: { 'x-api-key': apiKey }, payload: body });
  }

  beforeEach(async () => {
    // A generous wait budget: a loaded machine must not turn DONE into PROCESSING; the wait ends as soon as scoring does.
    t = await createTestApp(kind, { SUBMIT_WAIT_MS: '20000' });
    t.ctx.worker.start();
    const seeded = await seedAccount(t.ctx);
    key = seeded.key;
    scorerId = seeded.scorer.id;
    accountId = seeded.account.id;
  });
  afterEach(async () => t.close());

  it('scores three development-issuer stamps to their exact weighted sum', async () => {
    const credentials = await giveStamps(t.ctx, address, [
      { provider: 'Google', expiresInMs: 30 * 86_400_000 },
      { provider: 'Discord', expiresInMs: 10 * 86_400_000 },
      'Linkedin',
    ]);
    const res = await submit({ address: address.toUpperCase().replace('0X', '0x'), scorer_id: String(scorerId) });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    const discordExpiry = (credentials[1] as { expirationDate: string }).expirationDate;
    expect(body).toEqual({
      address,
      score: '2.57200',
      status: 'DONE',
      last_score_timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00$/),
      expiration_date: new Date(discordExpiry).toISOString().replace('Z', '+00:00'),
      evidence: null,
      error: null,
      stamp_scores: { Discord: '0.51600', Google: '0.52500', Linkedin: '1.53100' },
    });
    // The single read and the list answer the same record as the submission.
    const read = (await t.app.inject({ url: `/registry/score/${scorerId}/${address}`, headers: { 'x-api-key': key } })).json();
    expect(read).toEqual({ ...body, items: [body], count: 1 });
    const list = (await t.app.inject({ url: `/registry/score/${scorerId}`, headers: { 'x-api-key': key } })).json();
    expect(list).toEqual({ items: [body], count: 1 });
  });

  it('answers stamp_scores {} and a null expiration_date when nothing counted', async () => {
    const body = (await submit({ address, scorer_id: String(scorerId) })).json();
    expect(body).toMatchObject({ status: 'DONE', score: '0.00000', stamp_scores: {}, expiration_date: null });
  });

  it('gives a binary scorer 1.00000 or 0.00000 with threshold evidence', async () => {
    const binary = await t.ctx.accounts.createScorer(accountId, { name: 'gate', type: 'binary', threshold: '2.5' });
    await giveStamps(t.ctx, address, ['Google', 'Discord', 'Linkedin']);
    const pass = (await submit({ address, scorer_id: String(binary.id) })).json();
    expect(pass.score).toBe('1.00000');
    expect(pass.evidence).toEqual({ type: 'ThresholdScoreCheck', success: true, rawScore: '2.57200', threshold: '2.50000' });
    expect(pass.stamp_scores).toEqual({ Discord: '0.51600', Google: '0.52500', Linkedin: '1.53100' });
    expect(pass.expiration_date).toMatch(/\+00:00$/);

    await t.ctx.accounts.updateScorer(binary.id, { threshold: '2.573' });
    const fail = (await submit({ address, scorer_id: String(binary.id) })).json();
    expect(fail.score).toBe('0.00000');
    expect(fail.evidence).toEqual({ type: 'ThresholdScoreCheck', success: false, rawScore: '2.57200', threshold: '2.57300' });
  });

  it('applies the scorer’s weight overrides exactly', async () => {
    await t.ctx.accounts.updateScorer(scorerId, { weights: { Google: '0.1', Discord: '0.2' } });
    await giveStamps(t.ctx, address, ['Google', 'Discord']);
    expect((await submit({ address, scorer_id: String(scorerId) })).json().score).toBe('0.30000');
  });

  it('deduplicates a nullifier within a scorer (first holder keeps it) but not across scorers', async () => {
    await giveStamps(t.ctx, address, [{ provider: 'Google', nullifiers: ['shared-google-account'] }, 'Discord']);
    await giveStamps(t.ctx, other, [{ provider: 'Google', nullifiers: ['shared-google-account'] }, 'Linkedin']);
    expect((await submit({ address, scorer_id: String(scorerId) })).json().score).toBe('1.04100');
    expect((await submit({ address: other, scorer_id: String(scorerId) })).json().score).toBe('1.53100');
    // The first holder keeps its points on re-scoring.
    expect((await submit({ address, scorer_id: String(scorerId) })).json().score).toBe('1.04100');

    const second = await t.ctx.accounts.createScorer(accountId, { name: 'another' });
    expect((await submit({ address: other, scorer_id: String(second.id) })).json().score).toBe('2.05600');
  });

  it('ignores revoked, expired, deleted and no-longer-trusted stamps at the next scoring', async () => {
    await giveStamps(t.ctx, address, ['Google', 'Discord', { provider: 'Linkedin', expiresInMs: 1500 }]);
    expect((await submit({ address, scorer_id: String(scorerId) })).json().score).toBe('2.57200');
    await new Promise((r) => setTimeout(r, 1600));
    expect((await submit({ address, scorer_id: String(scorerId) })).json().score).toBe('1.04100');
    await t.ctx.stamps.revoke({ address, provider: 'Discord' });
    expect((await submit({ address, scorer_id: String(scorerId) })).json().score).toBe('0.52500');
    await t.ctx.database.db.updateTable('stamps').set({ deleted_at: Date.now() }).where('provider', '=', 'Google').execute();
    expect((await submit({ address, scorer_id: String(scorerId) })).json().score).toBe('0.00000');
  });

  it('stops counting an issuer once it is no longer trusted', async () => {
    const issuerKey = `0x${'5'.repeat(64)}` as const;
    await t.ctx.issuers.add(issuerDidFromPrivateKey(issuerKey), 'test issuer');
    const credential = issueCredential({
      privateKey: issuerKey,
      address,
      provider: 'Google',
      expiresAt: new Date(Date.now() + 86_400_000),
    });
    expect((await t.ctx.stamps.importCredentials([credential])).stored).toBe(1);
    expect((await submit({ address, scorer_id: String(scorerId) })).json().score).toBe('0.52500');
    await t.ctx.issuers.remove(issuerDidFromPrivateKey(issuerKey));
    expect((await submit({ address, scorer_id: String(scorerId) })).json().score).toBe('0.00000');
  });

  it('answers PROCESSING within a zero wait budget and becomes DONE on polling', async () => {
    await t.close();
    t = await createTestApp(kind, { SUBMIT_WAIT_MS: '0' });
    const seeded = await seedAccount(t.ctx);
    await giveStamps(t.ctx, address, ['Google']);
    const res = await submit({ address, scorer_id: String(seeded.scorer.id) }, seeded.key);
    expect(res.json()).toMatchObject({ status: 'PROCESSING', score: null, evidence: null, error: null });
    t.ctx.worker.start();
    let polled: { status: string; score: string | null } | undefined;
    for (let i = 0; i < 100; i++) {
      const read = await t.app.inject({ url: `/registry/score/${seeded.scorer.id}/${address}`, headers: { 'x-api-key': seeded.key } });
      polled = read.json().items[0];
      if (polled?.status === 'DONE') break;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(polled).toMatchObject({ status: 'DONE', score: '0.52500' });
  });

  it('accepts the deprecated `community` alias of scorer_id', async () => {
    await giveStamps(t.ctx, address, ['Google']);
    const res = await submit({ address, community: String(scorerId) });
    expect(res.json()).toMatchObject({ status: 'DONE', score: '0.52500' });
  });

  describe('wallet signatures', () => {
    async function signedBody(wallet = testWallet(7), signer = wallet) {
      const nonceRes = await t.app.inject({ url: '/registry/signing-message', headers: { 'x-api-key': key } });
      const { message, nonce } = nonceRes.json();
      const signature = await signer.account.signMessage({ message });
      return { address: wallet.address, scorer_id: String(scorerId), signature, nonce };
    }

    beforeEach(async () => {
      await t.ctx.accounts.updateScorer(scorerId, { requiresSignature: true });
    });

    it('scores with a valid signature and refuses to reuse its nonce', async () => {
      const body = await signedBody();
      await giveStamps(t.ctx, body.address, ['Discord']);
      expect((await submit(body)).json()).toMatchObject({ status: 'DONE', score: '0.51600' });
      const replay = await submit(body);
      expect(replay.statusCode).toBe(400);
      expect(replay.json().code).toBe('invalid_nonce');
    });

    it('binds a nonce to the account whose key asked for it: another account cannot consume it (finding 10)', async () => {
      const wallet = testWallet(9);
      await giveStamps(t.ctx, wallet.address, ['Discord']);
      const mallory = await seedAccount(t.ctx);
      await t.ctx.accounts.updateScorer(mallory.scorer.id, { requiresSignature: true });
      const signed = await signedBody(wallet);
      const stolen = await submit({ ...signed, scorer_id: String(mallory.scorer.id) }, mallory.key);
      expect(stolen.statusCode).toBe(400);
      expect(stolen.json()).toEqual({ detail: expect.any(String), code: 'invalid_nonce' });
      const row = await t.ctx.database.db.selectFrom('nonces').selectAll().where('nonce', '=', signed.nonce).executeTakeFirstOrThrow();
      expect(row.used_at).toBeNull();
      // The account that asked for it still can use it, once.
      expect((await submit(signed)).json()).toMatchObject({ status: 'DONE', score: '0.51600' });
      expect((await submit(signed)).json().code).toBe('invalid_nonce');
    });

    it('refuses a signature by another wallet and leaves the nonce usable', async () => {
      const wallet = testWallet(7);
      const forged = await signedBody(wallet, testWallet(8));
      const res = await submit(forged);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ detail: expect.any(String), code: 'invalid_signature' });
      const nonceRow = await t.ctx.database.db.selectFrom('nonces').selectAll().where('nonce', '=', forged.nonce).executeTakeFirstOrThrow();
      expect(nonceRow.used_at).toBeNull();
      const genuine = { ...forged, signature: await wallet.account.signMessage({ message: (await import('../../../../src/scoring/scores/nonces.service.js')).signingMessageFor(forged.nonce) }) };
      expect((await submit(genuine)).statusCode).toBe(200);
    });

    it.each([
      ['no signature', (b: Record<string, unknown>) => ({ ...b, signature: undefined, nonce: undefined }), 'invalid_signature'],
      ['no nonce', (b: Record<string, unknown>) => ({ ...b, nonce: undefined }), 'invalid_nonce'],
      ['an unknown nonce', (b: Record<string, unknown>) => ({ ...b, nonce: 'f'.repeat(64) }), 'invalid_nonce'],
      ['a malformed signature', (b: Record<string, unknown>) => ({ ...b, signature: '0x1234' }), 'invalid_signature'],
    ])('refuses %s with 400 and records nothing', async (_what, change, code) => {
      const body = change(await signedBody());
      const res = await submit(body);
      expect(res.statusCode).toBe(400);
      expect(res.json().code).toBe(code);
      expect(await t.ctx.database.db.selectFrom('scores').selectAll().execute()).toHaveLength(0);
    });

    it('checks a signature that is sent even when the scorer does not require one', async () => {
      await t.ctx.accounts.updateScorer(scorerId, { requiresSignature: false });
      const forged = await signedBody(testWallet(7), testWallet(9));
      expect((await submit(forged)).json().code).toBe('invalid_signature');
      expect((await submit({ address, scorer_id: String(scorerId) })).statusCode).toBe(200);
    });
  });

  describe('refusals', () => {
    it.each([
      ['a malformed address', { address: '0x123', scorer_id: '1' }, 400, 'invalid_address'],
      ['no scorer id', { address }, 400, 'invalid_request'],
      ['a non-numeric scorer id', { address, scorer_id: 'abc' }, 400, 'invalid_request'],
      ['an unknown scorer', { address, scorer_id: '99999' }, 404, 'scorer_not_found'],
    ])('refuses %s', async (_what, body, status, code) => {
      const res = await submit(body);
      expect(res.statusCode).toBe(status);
      expect(res.json()).toEqual({ detail: expect.any(String), code });
      expect(await t.ctx.database.db.selectFrom('scores').selectAll().execute()).toHaveLength(0);
    });

    it('takes an empty signature and nonce as not given (the reference airdrop example sends them)', async () => {
      await giveStamps(t.ctx, address, ['Google']);
      const res = await submit({ address, scorer_id: String(scorerId), signature: '', nonce: '' });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ status: 'DONE', score: '0.52500' });
    });

    it('still asks for a signature when the scorer requires one and it is empty', async () => {
      await t.ctx.accounts.updateScorer(scorerId, { requiresSignature: true });
      const res = await submit({ address, scorer_id: String(scorerId), signature: '', nonce: '' });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ detail: expect.any(String), code: 'invalid_signature' });
    });

    it('keeps an empty required field an error of that field', async () => {
      const res = await submit({ address: '', scorer_id: String(scorerId) });
      expect(res.statusCode).toBe(400);
      expect(res.json().code).toBe('invalid_address');
    });

    it('ignores unknown body fields, so newer clients keep working', async () => {
      const res = await submit({ address, scorer_id: String(scorerId), client_version: '2.0' });
      expect(res.statusCode).toBe(200);
    });

    it('treats another account’s scorer as not found', async () => {
      const stranger = await seedAccount(t.ctx);
      const res = await submit({ address, scorer_id: String(stranger.scorer.id) });
      expect(res.statusCode).toBe(404);
      expect(res.json().code).toBe('scorer_not_found');
    });

    it('needs the submit_passports permission', async () => {
      const { key: readOnly } = await t.ctx.apiKeys.create(accountId, { canSubmit: false });
      const res = await submit({ address, scorer_id: String(scorerId) }, readOnly);
      expect(res.statusCode).toBe(403);
      expect(res.json().code).toBe('permission_denied');
    });

    it('refuses malformed JSON and bodies over the limit', async () => {
      const bad = await t.app.inject({
        method: 'POST',
        url: '/registry/submit-passport',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        payload: '{"address":',
      });
      expect(bad.statusCode).toBe(400);
      expect(bad.json().code).toBe('invalid_json');
      const huge = await submit({ address, scorer_id: String(scorerId), nonce: 'x'.repeat(2_000_000) });
      expect(huge.statusCode).toBe(413);
      expect(huge.json().code).toBe('payload_too_large');
    });
  });
});
