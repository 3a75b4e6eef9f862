/**
 * What a re-scoring reads: the live stamps and the nullifier holds from covering
 * indexes, the holds of the scored address as one range (other holders looked up only for the
 * nullifiers it does not hold), and no read of the event log when the score row shows the result
 * unchanged, while a changed result, or a row that differs from its event, still reads it.
 */
import { CompiledQuery } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { stampsRepository } from '../../../src/scoring/stamps/stamps.repository.js';
import { createTestApp, seedAccount, startWorkerSettled, type TestApp } from '../../helpers/app.js';
import { databaseKinds } from '../../helpers/databases.js';
import { statementsOf } from '../../helpers/statement-log.js';
import { giveStamps, testWallet } from '../../helpers/stamps.js';

const alice = testWallet(301).address.toLowerCase();
const bob = testWallet(302).address.toLowerCase();
const readsEventLog = (sql: string) => sql.startsWith('select') && sql.includes('from "score_events"');
/** The process bus's pings and acks (every 25 ms in tests, over NOTIFY on PostgreSQL) may land in any recording. */
const ofTheWork = (statements: string[]) => statements.filter((sql) => !sql.startsWith('select pg_notify('));

describe.each(databaseKinds)('the reads of a scoring on %s', (kind) => {
  let t: TestApp;
  afterEach(async () => t?.close());

  async function events(address: string) {
    return t.ctx.database.db.selectFrom('score_events').select(['score']).where('address', '=', address).orderBy('id').execute();
  }

  it('finds the holds of the scored address in one statement, and other holders only for the rest', async () => {
    t = await createTestApp(kind);
    const { scorer } = await seedAccount(t.ctx);
    const expires = Date.now() + 86_400_000;
    await t.ctx.database.db
      .insertInto('nullifier_holds')
      .values([
        { scorer_id: scorer.id, nullifier: 'v1:alice-own', address: alice, expires_at: expires },
        { scorer_id: scorer.id, nullifier: 'v1:alice-not-asked', address: alice, expires_at: expires },
        { scorer_id: scorer.id, nullifier: 'v1:bob-own', address: bob, expires_at: expires },
      ])
      .execute();
    const stamps = stampsRepository(t.ctx.database);

    const mixed = await statementsOf(() => stamps.holdsFor(scorer.id, alice, ['v1:alice-own', 'v1:bob-own', 'v1:nobody']));
    expect([...mixed.result].sort((a, b) => a.nullifier.localeCompare(b.nullifier))).toEqual([
      { nullifier: 'v1:alice-own', address: alice, expires_at: expires },
      { nullifier: 'v1:bob-own', address: bob, expires_at: expires },
    ]);
    expect(ofTheWork(mixed.statements)).toHaveLength(2);

    const own = await statementsOf(() => stamps.holdsFor(scorer.id, alice, ['v1:alice-own']));
    expect(own.result).toEqual([{ nullifier: 'v1:alice-own', address: alice, expires_at: expires }]);
    expect(ofTheWork(own.statements)).toHaveLength(1);
    expect((await stamps.holdsFor(scorer.id, bob, ['v1:alice-own'])).map((hold) => hold.address)).toEqual([alice]);
  });

  it('re-scores an unchanged passport without reading the event log, and appends an event when the result changes', async () => {
    t = await createTestApp(kind, { SUBMIT_WAIT_MS: '20000', SCORING_POLL_MS: '60000' });
    await startWorkerSettled(t.ctx);
    const { scorer } = await seedAccount(t.ctx);
    await giveStamps(t.ctx, alice, ['Google', 'Discord']);
    expect(await t.ctx.scores.submit(scorer.id, alice)).toMatchObject({ status: 'DONE', score: '1.04100' });

    const again = await statementsOf(() => t.ctx.scores.submit(scorer.id, alice));
    expect(again.result).toMatchObject({ status: 'DONE', score: '1.04100' });
    expect(again.statements.filter(readsEventLog)).toEqual([]);
    expect(await events(alice)).toEqual([{ score: '1.04100' }]);

    await giveStamps(t.ctx, alice, ['Linkedin']);
    const changed = await statementsOf(() => t.ctx.scores.submit(scorer.id, alice));
    expect(changed.result).toMatchObject({ status: 'DONE', score: '2.57200' });
    expect(changed.statements.filter(readsEventLog)).toHaveLength(1);
    expect(await events(alice)).toEqual([{ score: '1.04100' }, { score: '2.57200' }]);
  });

  it('writes only the untracked columns of an unchanged result, and answers what is then stored', async () => {
    t = await createTestApp(kind, { SUBMIT_WAIT_MS: '20000', SCORING_POLL_MS: '60000' });
    await startWorkerSettled(t.ctx);
    const { scorer } = await seedAccount(t.ctx, { type: 'weighted' });
    await giveStamps(t.ctx, alice, ['Google', 'Discord']);
    const first = await t.ctx.scores.submit(scorer.id, alice);
    const storedRow = () => t.ctx.database.db.selectFrom('scores').selectAll().where('scorer_id', '=', scorer.id).where('address', '=', alice).executeTakeFirstOrThrow();
    const before = await storedRow();
    await new Promise((resolve) => setTimeout(resolve, 5)); // a later last_score_timestamp

    const again = await statementsOf(() => t.ctx.scores.submit(scorer.id, alice));
    const writes = again.statements.filter((sql) => /^(insert into|update) "scores"/.test(sql));
    expect(writes).toHaveLength(1);
    expect(writes[0]).toMatch(/^update "scores" set "last_score_timestamp"/);
    expect(writes[0]).not.toContain('"stamps"');
    const after = await storedRow();
    expect(after.last_score_timestamp).toBeGreaterThan(before.last_score_timestamp);
    expect({ ...after, last_score_timestamp: 0 }).toEqual({ ...before, last_score_timestamp: 0 });
    // The answer is the record of the row as stored, not of the row as it was.
    expect(again.result).toEqual({ ...first, last_score_timestamp: again.result.last_score_timestamp });
    expect(again.result.last_score_timestamp).not.toBe(first.last_score_timestamp);
    expect(await t.ctx.scores.submit(scorer.id, alice)).toMatchObject({ stamp_scores: first.stamp_scores, expiration_date: first.expiration_date });
  });

  it('reads the event itself when the row differs from it (a row the event-log backfill wrote), and appends nothing for an equal result', async () => {
    t = await createTestApp(kind, { SUBMIT_WAIT_MS: '20000', SCORING_POLL_MS: '60000' });
    await startWorkerSettled(t.ctx);
    const { scorer } = await seedAccount(t.ctx);
    await giveStamps(t.ctx, alice, ['Google']);
    expect(await t.ctx.scores.submit(scorer.id, alice)).toMatchObject({ status: 'DONE', score: '0.52500' });
    // The backfill copied `error` only for ERROR rows: a DONE row may keep a stale one.
    await t.ctx.database.db.updateTable('scores').set({ error: 'left by an old version' }).where('address', '=', alice).execute();

    const again = await statementsOf(() => t.ctx.scores.submit(scorer.id, alice));
    expect(again.result).toMatchObject({ status: 'DONE', score: '0.52500', error: null });
    expect(again.statements.filter(readsEventLog)).toHaveLength(1);
    expect(await events(alice)).toEqual([{ score: '0.52500' }]);
  });

  const stampReads = (statements: string[]) => statements.filter((sql) => sql.startsWith('select') && sql.includes('from "stamps"'));
  const idsOnly = /^select "id" from "stamps" where/;

  it('re-reads only the ids of the stored stamps of an address it has read before, and still sees a stamp added, deleted or revoked since', async () => {
    t = await createTestApp(kind, { SUBMIT_WAIT_MS: '20000', SCORING_POLL_MS: '60000' });
    await startWorkerSettled(t.ctx);
    const { scorer } = await seedAccount(t.ctx);
    await giveStamps(t.ctx, alice, ['Google', 'Discord']);
    const submit = () => statementsOf(() => t.ctx.scores.submit(scorer.id, alice));

    const first = await submit();
    expect(first.result).toMatchObject({ status: 'DONE', score: '1.04100' });
    expect(stampReads(first.statements)).toHaveLength(1);
    expect(stampReads(first.statements)[0]).not.toMatch(idsOnly);

    const again = await submit();
    expect(again.result).toMatchObject({ status: 'DONE', score: '1.04100', stamp_scores: first.result.stamp_scores });
    expect(stampReads(again.statements)).toHaveLength(1);
    expect(stampReads(again.statements)[0]).toMatch(idsOnly);

    await giveStamps(t.ctx, alice, ['Linkedin']);
    const added = await submit();
    expect(added.result).toMatchObject({ score: '2.57200' });
    expect(stampReads(added.statements).map((sql) => idsOnly.test(sql))).toEqual([true, false]);
    await t.ctx.database.db.updateTable('stamps').set({ deleted_at: Date.now() }).where('address', '=', alice).where('provider', '=', 'Google').execute();
    const afterDeletion = await submit();
    expect(afterDeletion.result).toMatchObject({ score: '2.04700' });
    expect(stampReads(afterDeletion.statements)).toHaveLength(1);
    await t.ctx.database.db.updateTable('stamps').set({ revoked_at: Date.now() }).where('address', '=', alice).where('provider', '=', 'Discord').execute();
    expect((await submit()).result).toMatchObject({ score: '1.53100' });
    await t.ctx.database.db.updateTable('stamps').set({ deleted_at: null }).where('address', '=', alice).where('provider', '=', 'Google').execute();
    expect((await submit()).result).toMatchObject({ score: '2.05600' });
  });

  it('keeps the stamps of the most recently scored addresses within its bound, and reads an address it let go whole', async () => {
    t = await createTestApp(kind);
    const carol = testWallet(303).address.toLowerCase();
    for (const address of [alice, bob, carol]) await giveStamps(t.ctx, address, ['Google', 'Discord']);
    const stamps = stampsRepository(t.ctx.database, { scoringStampsMax: 6 });
    const read = async (address: string) => {
      const { result, statements } = await statementsOf(() => stamps.liveForScoring(address));
      expect(result.map((stamp) => stamp.provider).sort()).toEqual(['Discord', 'Google']);
      return stampReads(statements).map((sql) => (idsOnly.test(sql) ? 'ids' : 'whole'));
    };
    expect(await read(alice)).toEqual(['whole']);
    expect(await read(bob)).toEqual(['whole']);
    expect(await read(alice)).toEqual(['ids']);
    // Two addresses of two stamps fill the bound (each counts its stamps and itself): carol's makes the least recently scored (bob) leave.
    expect(await read(carol)).toEqual(['whole']);
    expect(await read(alice)).toEqual(['ids']);
    expect(await read(bob)).toEqual(['whole']);
    expect(await read(carol)).toEqual(['whole']);

    // An address without live stamps is not kept (any number of them would fill no bound).
    const nobody = testWallet(304).address.toLowerCase();
    for (let round = 0; round < 2; round++) {
      const { result, statements } = await statementsOf(() => stamps.liveForScoring(nobody));
      expect(result).toEqual([]);
      expect(stampReads(statements).map((sql) => idsOnly.test(sql))).toEqual([false]);
    }
    expect(await read(carol)).toEqual(['ids']);
  });

  if (kind === 'sqlite') {
    it('answers the live stamps and the holds of the address from covering indexes (SQLite query plans)', async () => {
      t = await createTestApp(kind, { SUBMIT_WAIT_MS: '20000', SCORING_POLL_MS: '60000' });
      await startWorkerSettled(t.ctx);
      const { scorer } = await seedAccount(t.ctx);
      await giveStamps(t.ctx, alice, ['Google', 'Discord']);
      const first = await statementsOf(() => t.ctx.scores.submit(scorer.id, alice));
      const again = await statementsOf(() => t.ctx.scores.submit(scorer.id, alice));
      const statements = [...first.statements, ...again.statements];
      const plansOf = async (table: string) => {
        const reads = statements.filter((sql) => sql.startsWith('select') && sql.includes(`from "${table}"`));
        const plans: string[] = [];
        for (const read of reads) {
          const parameters = Array.from({ length: (read.match(/\?/g) ?? []).length }, () => 1);
          const plan = await t.ctx.database.db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${read}`, parameters));
          plans.push(plan.rows.map((row) => row.detail).join('; '));
        }
        return plans;
      };
      // A first scoring reads the stamps whole, the next one only their ids.
      const stampPlans = await plansOf('stamps');
      expect(stampPlans).toHaveLength(2);
      for (const plan of stampPlans) expect(plan).toContain('USING COVERING INDEX stamps_live_scoring_idx');
      // The holds: the address's own (a range of that index), then the others' of what it does not hold.
      expect((await plansOf('nullifier_holds'))[0]).toContain('USING COVERING INDEX nullifier_holds_address_idx');
    });
  }
});
