import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BATCH_STAMPS, batchAddress, batchAddressStamps } from '../../bench/scale/batch-group.js';
import { eventIds, generatedAddressRows, insertRows } from '../../bench/scale/build.js';
import { DAY_MS, firstScoringRows, restatedCredential, scaleCounts, type ScoringContext, stampRow } from '../../bench/scale/generator.js';
import { issueCredential } from '../../src/scoring/stamps/dev-issuer.js';
import { createTestApp, seedAccount, startWorkerSettled, type TestApp } from '../helpers/app.js';
import { databaseKinds } from '../helpers/databases.js';

const ADDRESS = '0x00000000000000000000000000000000005ca1e5';
const PROVIDERS = ['SelfStakingBronze', 'NFTScore#50', 'ETHGasSpent#0.25', 'Discord', 'SelfStakingSilver'];

describe.each(databaseKinds)('scale data set rows on %s', (kind) => {
  let t: TestApp;
  let scorerId: number;
  let context: ScoringContext;
  const credentials: ReturnType<typeof issueCredential>[] = [];

  beforeAll(async () => {
    t = await createTestApp(kind);
    const seeded = await seedAccount(t.ctx);
    scorerId = seeded.scorer.id;
    const key = t.ctx.devIssuerKey!;
    // Whole seconds, as the reference issuer states validity; one stamp expires first (the score's expiry).
    const issuedAt = Math.floor(Date.now() / 1000) * 1000 - 30 * DAY_MS;
    for (const [k, provider] of PROVIDERS.entries()) {
      const expiresAt = k === 3 ? Date.now() + 2000 : issuedAt + 90 * DAY_MS;
      credentials.push(issueCredential({ privateKey: key, address: ADDRESS, provider, issuedAt: new Date(issuedAt + k * 1000), expiresAt: new Date(expiresAt) }));
    }
    const report = await t.ctx.stamps.importCredentials(credentials as never);
    expect(report.rejected).toBe(0);
    await startWorkerSettled(t.ctx);
    const scorer = await t.ctx.accounts.getScorer(scorerId);
    context = { scorerId, scorer, trusted: await t.ctx.issuers.current(), catalogue: t.ctx.catalogue };
  }, 60_000);
  afterAll(async () => t.close());

  it('writes the stamp, score, event and hold rows the service writes for the same credentials and time', async () => {
    const record = await t.ctx.scores.submit(scorerId, ADDRESS);
    expect(record.status).toBe('DONE');
    const db = t.ctx.database.db;
    const stored = await db.selectFrom('stamps').selectAll().where('address', '=', ADDRESS).orderBy('id').execute();
    const score = await db.selectFrom('scores').selectAll().where('scorer_id', '=', scorerId).where('address', '=', ADDRESS).executeTakeFirstOrThrow();
    const events = await db.selectFrom('score_events').selectAll().where('scorer_id', '=', scorerId).where('address', '=', ADDRESS).execute();
    const holds = await db.selectFrom('nullifier_holds').selectAll().where('scorer_id', '=', scorerId).orderBy('nullifier').execute();
    expect(stored).toHaveLength(PROVIDERS.length);
    expect(events).toHaveLength(1);

    const normal = <T extends object>(row: T) => JSON.parse(JSON.stringify(row, (_k, v: unknown) => (typeof v === 'string' && /^\d{13}$/.test(v) ? Number(v) : v))) as T;
    const generatedStamps = stored.map((row, k) => stampRow(row.id, credentials[k], ADDRESS, Number(row.created_at)));
    expect(generatedStamps.map(normal)).toEqual(stored.map(normal));

    const now = Number(score.last_score_timestamp);
    const generated = firstScoringRows(context, ADDRESS, generatedStamps, now, Number(events[0]!.id));
    expect(normal(generated.score)).toEqual(normal(score));
    expect(normal(generated.event)).toEqual(normal(events[0]!));
    expect(generated.holds.map(normal).sort((a, b) => a.nullifier.localeCompare(b.nullifier))).toEqual(holds.map(normal));
    expect(holds).toHaveLength(PROVIDERS.length);
    expect(Number(score.raw_score)).toBeGreaterThan(0);
  });

  it('restates a template credential as the issuer states one for the address, all but the signature', () => {
    const template = issueCredential({ privateKey: t.ctx.devIssuerKey!, address: '0x1111111111111111111111111111111111111111', provider: PROVIDERS[0]!, expiresAt: new Date(Date.now() + DAY_MS) });
    const real = credentials[0]!;
    const subject = real.credentialSubject as { nullifiers: string[] };
    const restated = restatedCredential(template, ADDRESS, subject.nullifiers[0]!, Date.parse(real.issuanceDate as string), Date.parse(real.expirationDate as string));
    const withoutSignature = (c: object) => ({ ...c, proof: { ...(c as { proof: object }).proof, proofValue: null } });
    expect(withoutSignature(restated)).toEqual(withoutSignature(real));
    expect((restated.proof as { proofValue: string }).proofValue).not.toBe((real.proof as { proofValue: string }).proofValue);
  });

  it('numbers the events of the generated addresses 1..3n in time order', () => {
    const counts = scaleCounts(0.00001);
    const templates = new Map(PROVIDERS.map((p) => [p, credentials[0]]));
    const scorers: [ScoringContext, ScoringContext] = [context, { ...context, scorerId: scorerId + 1 }];
    const builtAt = Date.now();
    const events = Array.from({ length: counts.addresses }, (_, i) => generatedAddressRows(i, counts, builtAt, templates, scorers).events).flat();
    expect(events.map((e) => e.id).sort((a, b) => a - b)).toEqual(Array.from({ length: 3 * counts.addresses }, (_, k) => k + 1));
    const byId = [...events].sort((a, b) => a.id - b.id);
    expect(byId.map((e) => e.created_at)).toEqual([...byId.map((e) => e.created_at)].sort((a, b) => a - b));
    expect(eventIds(0, counts.addresses).earlier).toBe(1);
  });

  it('gives a batch-group address 20 stored stamps that the service scores as a first scoring, every stamp counted', async () => {
    const providers = [...t.ctx.catalogue.defaultWeights.entries()].filter(([, weight]) => Number(weight) > 0).map(([provider]) => provider);
    const builtAt = Date.now();
    const key = t.ctx.devIssuerKey!;
    const templates = new Map(providers.map((provider) => [provider, issueCredential({ privateKey: key, address: ADDRESS, provider, issuedAt: new Date(builtAt), expiresAt: new Date(builtAt + 90 * DAY_MS) })]));
    const firstId = 1_000_000;
    const rows = batchAddressStamps(3, firstId, builtAt, templates);
    expect(rows).toHaveLength(BATCH_STAMPS);
    expect(new Set(rows.map((r) => r.provider)).size).toBe(BATCH_STAMPS);
    expect(rows.map((r) => r.id)).toEqual(Array.from({ length: BATCH_STAMPS }, (_, k) => firstId + 3 * BATCH_STAMPS + k + 1));
    const address = batchAddress(3);
    expect(rows.every((r) => r.address === address)).toBe(true);
    await insertRows(t.ctx.database.db as never, 'stamps', rows);
    const record = await t.ctx.scores.submit(scorerId, address);
    expect(record.status).toBe('DONE');
    const holds = await t.ctx.database.db.selectFrom('nullifier_holds').select('nullifier').where('scorer_id', '=', scorerId).where('address', '=', address).execute();
    expect(holds).toHaveLength(BATCH_STAMPS);
  });
});
