import Fastify from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EventFeedSchema } from '../../src/webhooks/webhooks.schema.js';
import { createTestApp, seedAccount, type TestApp } from '../helpers/app.js';
import { databaseKinds } from '../helpers/databases.js';

const DAY = 86_400_000;
const at = Date.UTC(2026, 10, 25, 13, 5, 7, 89);
const address = (n: number) => `0x${n.toString(16).padStart(40, '0')}`;
const breakdown = (entries: Record<string, { score: string; dedup: boolean; expiration_date: string }>) => JSON.stringify(entries);

/** Events unlike each other in every field the feed writes, as the scoring stores them. */
function varied(scorerId: number) {
  const base = {
    scorer_id: scorerId,
    status: 'DONE' as const,
    score: '1.00000',
    raw_score: '21.75400',
    passing: 1,
    threshold: '20.00000',
    evidence: null,
    expiration_date: at + 90 * DAY,
    error: null,
  };
  const stamps = breakdown({
    Google: { score: '0.52500', dedup: false, expiration_date: '2027-01-01T00:00:00.000+00:00' },
    'Ens «ü» 名前 🦊': { score: '0.00000', dedup: true, expiration_date: '2027-01-02T00:00:00.000+00:00' },
  });
  return [
    { ...base, type: 'score.updated' as const, address: address(1), stamps, created_at: at },
    { ...base, type: 'score.updated' as const, address: address(2), stamps: '{}', passing: 0, raw_score: '0.00000', expiration_date: null, created_at: at + 1 },
    {
      ...base,
      type: 'score.updated' as const,
      address: address(3),
      status: 'ERROR' as const,
      score: null,
      raw_score: null,
      passing: 0,
      threshold: null,
      expiration_date: null,
      stamps: '{}',
      error: 'Scorer "broken":\n\tweights ≠ 1 \\ 💥 \u0001',
      created_at: at + 2,
    },
    { ...base, type: 'score.updated' as const, address: address(4), stamps: '', raw_score: null, threshold: null, created_at: at + 3 },
    // A warning repeats the scoring before it: its last_score_timestamp is that scoring's time.
    { ...base, type: 'score.expiring' as const, address: address(1), stamps, created_at: at + 5 * DAY },
    // A warning with no scoring before it stored falls back to its own time.
    { ...base, type: 'score.expiring' as const, address: address(5), stamps, created_at: at + 6 * DAY },
    { ...base, type: 'score.updated' as const, address: address(1), stamps: breakdown({ 'Clé "x"': { score: '3.10000', dedup: false, expiration_date: '2027-02-01T00:00:00.000+00:00' } }), created_at: at + 7 * DAY },
  ];
}

describe.each(databaseKinds)('the event feed written as text, on %s', (kind) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp(kind);
  });
  afterEach(async () => t.close());

  it('equals, byte for byte, the schema serialization of the object page', async () => {
    const seeded = await seedAccount(t.ctx, { permissions: ['historical_endpoint'] });
    const other = await seedAccount(t.ctx);
    await t.ctx.database.db.insertInto('score_events').values(varied(seeded.scorer.id)).execute();
    await t.ctx.database.db.insertInto('score_events').values(varied(other.scorer.id).slice(0, 2)).execute();
    const feed = t.ctx.webhooks.feed;

    // The route's serializer before the page was written as text: the same schema on a plain server.
    const reference = Fastify();
    reference.get('/', { schema: { response: { 200: EventFeedSchema } } }, async (request) => {
      const { after, limit } = request.query as { after: string; limit: string };
      return feed.events(seeded.account.id, seeded.scorer.id, Number(after), Number(limit));
    });
    await reference.ready();
    try {
      const pages: [number, number][] = [[0, 1000], [0, 1], [0, 3], [2, 2], [4, 100], [100_000, 10]];
      const ids = (await t.ctx.database.db.selectFrom('score_events').select('id').where('scorer_id', '=', seeded.scorer.id).orderBy('id').execute()).map((r) => Number(r.id));
      pages.push([ids[1]!, 3], [ids.at(-1)!, 5]);
      for (const [after, limit] of pages) {
        const expected = await reference.inject({ url: `/?after=${after}&limit=${limit}` });
        expect(expected.statusCode).toBe(200);
        const written = await feed.eventsJson(seeded.account.id, seeded.scorer.id, after, limit);
        expect(written).toBe(expected.body);
        const served = await t.app.inject({ url: `/v2/scorers/${seeded.scorer.id}/events?after=${after}&limit=${limit}`, headers: { 'x-api-key': seeded.key } });
        expect(served.statusCode, served.body).toBe(200);
        expect(served.headers['content-type']).toBe('application/json; charset=utf-8');
        expect(served.body).toBe(expected.body);
      }
      const all = JSON.parse(await feed.eventsJson(seeded.account.id, seeded.scorer.id, 0, 1000));
      expect(all.items).toHaveLength(7);
      expect(all.items[4].data.last_score_timestamp).toBe('2026-11-25T13:05:07.089+00:00');
      expect(all.items[2].data.error).toContain('💥');
      expect(Object.keys(all.items[0].data.stamps)).toContain('Ens «ü» 名前 🦊');
    } finally {
      await reference.close();
    }
  });
});
