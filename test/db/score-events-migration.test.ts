import { type Kysely } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../../src/db/migrate.js';
import { createTestDatabase, databaseKinds, migrateUpTo, type TestDatabase } from '../helpers/databases.js';

const iso = (ms: number) => new Date(ms).toISOString().replace('Z', '+00:00');

describe.each(databaseKinds)('0013-score-events on %s', (kind) => {
  let test: TestDatabase;
  afterEach(async () => test.drop());

  it('backfills one event per settled score row from what is stored, none for PROCESSING, and links the rows', async () => {
    test = await createTestDatabase(kind);
    const database = test.open();
    try {
      await migrateUpTo(database, kind, '0012-scorer-settings');
      const db = database.db as unknown as Kysely<any>;
      const account = await db.insertInto('accounts').values({ name: 'old', created_at: 1 }).returning('id').executeTakeFirstOrThrow();
      const scorer = (type: string) => ({ account_id: account.id, name: type, type, threshold: '20', weights: '{}', requires_signature: 0, created_at: 1, updated_at: 1 });
      const [weighted, binary] = (await db.insertInto('scorers').values([scorer('weighted'), scorer('binary')]).returning('id').execute()) as [{ id: number }, { id: number }];
      const expiry = Date.UTC(2026, 5, 1);
      const base = { evidence: null, error: null, expiration_date: null, stamp_scores: '{}' };
      await db
        .insertInto('scores')
        .values([
          { ...base, scorer_id: weighted.id, address: '0x01', status: 'DONE', score: '21.50000', last_score_timestamp: 1000, expiration_date: expiry, stamp_scores: '{"Google":"1.50000","X":"20.00000"}' },
          {
            ...base,
            scorer_id: binary.id,
            address: '0x01',
            status: 'DONE',
            score: '0.00000',
            evidence: '{"type":"ThresholdScoreCheck","success":false,"rawScore":"1.50000","threshold":"20.00000"}',
            last_score_timestamp: 2000,
            stamp_scores: '{"Google":"1.50000"}',
          },
          { ...base, scorer_id: weighted.id, address: '0x02', status: 'ERROR', score: null, error: 'It broke.', last_score_timestamp: 3000 },
          { ...base, scorer_id: weighted.id, address: '0x03', status: 'PROCESSING', score: null, last_score_timestamp: 4000, stamp_scores: null },
        ])
        .execute();

      expect(await migrateToLatest(database)).toContain('0013-score-events');
      const events = await db.selectFrom('score_events').selectAll().orderBy('scorer_id').orderBy('address').execute();
      expect(events.map((e) => [e.scorer_id, e.address, e.type, e.status, e.score, e.raw_score, Number(e.passing), e.threshold, e.error, Number(e.created_at)])).toEqual([
        [weighted.id, '0x01', 'score.updated', 'DONE', '21.50000', '21.50000', 1, '20.00000', null, 1000],
        [weighted.id, '0x02', 'score.updated', 'ERROR', null, null, 0, '20.00000', 'It broke.', 3000],
        [binary.id, '0x01', 'score.updated', 'DONE', '0.00000', '1.50000', 0, '20.00000', null, 2000],
      ]);
      expect(JSON.parse(events[0]!.stamps)).toEqual({
        Google: { score: '1.50000', dedup: false, expiration_date: iso(expiry) },
        X: { score: '20.00000', dedup: false, expiration_date: iso(expiry) },
      });
      const rows = await db.selectFrom('scores').selectAll().orderBy('scorer_id').orderBy('address').execute();
      for (const row of rows) {
        const event = events.find((e) => e.scorer_id === row.scorer_id && e.address === row.address);
        if (row.status === 'PROCESSING') {
          expect(event).toBeUndefined();
          expect(row.event_id).toBeNull();
        } else {
          expect(Number(row.event_id)).toBe(Number(event!.id));
          expect([row.raw_score, row.stamps, Number(row.passing)]).toEqual([event!.raw_score, event!.stamps, Number(event!.passing)]);
        }
      }
      // New events number after the backfilled ones.
      const next = await db
        .insertInto('score_events')
        .values({ scorer_id: weighted.id, address: '0x09', status: 'DONE', stamps: '{}', created_at: 5000 })
        .returning(['id', 'type'])
        .executeTakeFirstOrThrow();
      expect(Number(next.id)).toBeGreaterThan(Math.max(...events.map((e) => Number(e.id))));
      expect(next.type).toBe('score.updated');
    } finally {
      await database.close();
    }
  });
});
