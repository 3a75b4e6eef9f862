import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { capped } from '../../../src/scoring/scorers/capped.js';
import { parseDecimal } from '../../../src/scoring/scorers/decimal.js';
import { computeScore, type CandidateStamp } from '../../../src/scoring/scorers/engine.js';
import { loadCatalogue } from '../../../src/scoring/stamps/catalogue.js';
import { createTestApp, seedAccount, type TestApp } from '../../helpers/app.js';
import { databaseKinds } from '../../helpers/databases.js';
import { giveStamps } from '../../helpers/stamps.js';

// Catalogue weights (assets/stamp-catalogue.json): platform ETH has ETHScore#50 16.021, ETHScore#75 2.399,
// ETHScore#90 2.926 (21.346 together); platform Google has Google 0.525; platform Discord has Discord 0.516.
const catalogue = loadCatalogue();
const platformOf = (provider: string) => catalogue.metadataFor(provider)?.platform.id ?? provider;

describe('the capped scorer type', () => {
  const stamp = (provider: string, weight: string) => ({ provider, platform: platformOf(provider), weight: parseDecimal(weight) });

  it('caps each platform at platform_cap, spending the cap in the order the stamps come', () => {
    const result = capped.score(
      [stamp('ETHScore#50', '16.021'), stamp('ETHScore#75', '2.399'), stamp('ETHScore#90', '2.926'), stamp('Google', '0.525')],
      { platform_cap: '10', threshold: '20' },
    );
    expect(result.applied.map(String)).toEqual(['10', '0', '0', '0.525']);
    expect(result.score.toFixed(5)).toBe('10.52500');
    expect(result.evidence).toBeNull();
  });

  it('lets a platform under its cap count in full and fills the cap exactly', () => {
    const result = capped.score([stamp('ETHScore#75', '2.399'), stamp('ETHScore#90', '2.926')], { platform_cap: '5', threshold: '20' });
    expect(result.applied.map(String)).toEqual(['2.399', '2.601']);
    expect(result.score.toFixed(5)).toBe('5.00000');
  });

  it('treats a provider the catalogue does not know as its own platform', () => {
    const result = capped.score([stamp('Unknown1', '7'), stamp('Unknown2', '7')], { platform_cap: '5', threshold: '20' });
    expect(result.applied.map(String)).toEqual(['5', '5']);
  });

  it('defaults platform_cap to 10 through the engine, and the stamp scores add up to the score', () => {
    const now = new Date('2026-03-01T12:00:00.000Z');
    const candidates: CandidateStamp[] = ['ETHScore#50', 'ETHScore#75', 'Google'].map((provider, index) => ({
      id: `s${index}`,
      provider,
      nullifiers: [`n:${provider}`],
      issuanceDate: new Date(now.getTime() - 86_400_000),
      expirationDate: new Date(now.getTime() + 86_400_000),
      valid: true,
    }));
    const result = computeScore({
      address: '0x' + 'aa'.repeat(20),
      scorer: { type: 'capped', threshold: '20', weights: {} },
      defaultWeights: catalogue.defaultWeights,
      platforms: new Map(candidates.map((c) => [c.provider, platformOf(c.provider)])),
      now,
      stamps: candidates,
      holds: new Map(),
    });
    expect(result.score).toBe('10.52500');
    expect(result.rawScore).toBe('18.945');
    expect(result.stampScores).toEqual({ 'ETHScore#50': '10.00000', 'ETHScore#75': '0.00000', Google: '0.52500' });
  });
});

describe.each(databaseKinds)('a capped scorer through POST /registry/submit-passport on %s', (kind) => {
  const address = '0x' + 'ef'.repeat(20);
  let t: TestApp;
  let key: string;
  let accountId: number;

  beforeEach(async () => {
    t = await createTestApp(kind, { SUBMIT_WAIT_MS: '20000' });
    t.ctx.worker.start();
    const seeded = await seedAccount(t.ctx);
    key = seeded.key;
    accountId = seeded.account.id;
  });
  afterEach(async () => t.close());

  const submit = (scorerId: number) =>
    t.app.inject({ method: 'POST', url: '/registry/submit-passport', headers: { 'x-api-key': key }, payload: { address, scorer_id: String(scorerId) } });

  it('stores and answers the capped score; the cap is a setting of the scorer', async () => {
    await giveStamps(t.ctx, address, ['ETHScore#50', 'ETHScore#75', 'ETHScore#90', 'Google', 'Discord']);
    const scorer = await t.ctx.accounts.createScorer(accountId, { name: 'capped', type: 'capped' });
    expect(scorer.type).toBe('capped');

    const first = await submit(scorer.id);
    expect(first.statusCode).toBe(200);
    expect(first.json()).toMatchObject({
      status: 'DONE',
      score: '11.04100',
      evidence: null,
      stamp_scores: { Discord: '0.51600', 'ETHScore#50': '10.00000', 'ETHScore#75': '0.00000', 'ETHScore#90': '0.00000', Google: '0.52500' },
    });

    const changed = await t.ctx.accounts.updateScorer(scorer.id, { settings: { platform_cap: '17.5' } });
    expect(changed.settings).toEqual({ platform_cap: '17.5' });
    const second = (await submit(scorer.id)).json();
    expect(second.score).toBe('18.54100');
    expect(second.stamp_scores).toMatchObject({ 'ETHScore#50': '16.02100', 'ETHScore#75': '1.47900', 'ETHScore#90': '0.00000' });
    const read = (await t.app.inject({ url: `/registry/score/${scorer.id}/${address}`, headers: { 'x-api-key': key } })).json();
    expect(read.score).toBe('18.54100');
  });

  it('refuses a malformed platform_cap with invalid_request and stores nothing', async () => {
    await expect(
      t.ctx.accounts.createScorer(accountId, { name: 'bad', type: 'capped', settings: { platform_cap: 'ten' } }),
    ).rejects.toMatchObject({ code: 'invalid_request' });
    await expect(
      t.ctx.accounts.createScorer(accountId, { name: 'bad', type: 'capped', settings: { cap: '1' } }),
    ).rejects.toMatchObject({ code: 'invalid_request' });
    expect((await t.ctx.accounts.listScorers(accountId)).map((s) => s.type)).toEqual(['weighted']);
  });
});
