import { type Kysely } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { bountyRow } from '../../../bench/bounties-seed.js';
import type { Database } from '../../../src/db/connection.js';
import type { ReadRunner, ReadSteps } from '../../../src/db/read-steps.js';
import { migrateToLatest } from '../../../src/db/migrate.js';
import type { BountiesTable } from '../../../src/db/tables/public-data.js';
import { bountiesRepository } from '../../../src/publicdata/bounties/bounties.repository.js';
import { parseBountyQuery, renderBounty } from '../../../src/publicdata/bounties/bounties.service.js';
import { bountyListJsonOfBodies } from '../../../src/publicdata/bounties/bounty-json.js';
import type { Problem } from '../../../src/publicdata/import/import-fields.js';
import { readBounty } from '../../../src/publicdata/import/import-records.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { createTestDatabase, databaseKinds, migrateUpTo, type TestDatabase } from '../../helpers/databases.js';
import { bountyFixtures, importOk } from '../fixtures.js';
import { vocabularyFixtures } from '../vocabulary-fixtures.js';

/** Rows as the import writes them: the vocabulary fixtures (every optional field set), the plain ones, and a few bench rows. */
function fixtureRows(): BountiesTable[] {
  const plain = bountyFixtures().map((b) => ({ ...b, id: b.id + 100 }));
  const rows = [...vocabularyFixtures(), ...plain].map((record, i) => {
    const problems: Problem[] = [];
    const row = readBounty(`bounties[${i}]`, record, problems);
    if (!row) throw new Error(`fixture ${i}: ${JSON.stringify(problems)}`);
    return row;
  });
  let seed = 7;
  const random = () => ((seed = (seed * 48271) % 2147483647) / 2147483647);
  for (let id = 201; id <= 204; id++) rows.push(bountyRow(id, random, ['0x00000000000000000000000000000000000000aa']));
  return rows;
}

/** What the API answers for these rows, as renderBounty shows them (the reference of the stored texts). */
function rendered(rows: BountiesTable[], baseUrl: string, now: number): string {
  return JSON.stringify(rows.map((row) => renderBounty(row, baseUrl, now)));
}

/** `runner`, noting the SQL of every statement it runs. */
function recorded(runner: ReadRunner, statements: string[]): ReadRunner {
  return <T>(steps: ReadSteps<T>) =>
    runner(
      (function* (): ReadSteps<T> {
        let step = steps.next();
        while (!step.done) {
          statements.push(step.value.sql);
          step = steps.next(yield step.value);
        }
        return step.value;
      })(),
    );
}

async function storedBodies(database: Database, ids: number[]) {
  const rows = await database.db.selectFrom('bounty_bodies').select(['bounty_id', 'head', 'tail']).where('bounty_id', 'in', ids).orderBy('bounty_id').execute();
  return rows.map((row) => ({ id: row.bounty_id, head: row.head, tail: row.tail }));
}

describe.each(databaseKinds)('0020-bounty-bodies on %s', (kind) => {
  let test: TestDatabase;
  afterEach(async () => test.drop());

  it('backfills the stored text of every existing bounty, byte for byte what the API answered before', async () => {
    test = await createTestDatabase(kind);
    const database = test.open();
    try {
      await migrateUpTo(database, kind, '0018-portal');
      const rows = fixtureRows();
      await (database.db as unknown as Kysely<any>).insertInto('bounties').values(rows).execute();

      expect(await migrateToLatest(database)).toContain('0020-bounty-bodies');
      const ids = rows.map((row) => row.id).sort((a, b) => a - b);
      const stored = await storedBodies(database, ids);
      expect(stored.map((row) => row.id)).toEqual(ids);
      // Compared with the rows as read back (the database's own types), as the API renders them.
      const readBack = await database.db.selectFrom('bounties').selectAll().orderBy('id').execute();
      const base = 'https://example.org/"quoted"\\';
      const now = Date.UTC(2026, 5, 1, 12, 30, 45, 123);
      expect(bountyListJsonOfBodies(stored, base, now)).toBe(rendered(readBack, base, now));
    } finally {
      await database.close();
    }
  });
});

describe.each(databaseKinds)('stored bounty texts on %s', (kind) => {
  let t: TestApp;
  const list = async (query = '') => {
    const res = await t.app.inject(`/api/v0.1/bounties/?order_by=pk&limit=1000${query}`);
    expect(res.statusCode).toBe(200);
    return res;
  };
  beforeAll(async () => {
    t = await createTestApp(kind, { PUBLIC_CACHE_TTL: '0', PUBLIC_BASE_URL: 'https://api.example.org' });
    await importOk(t.ctx, { bounties: [...vocabularyFixtures(), ...bountyFixtures().map((b) => ({ ...b, id: b.id + 100 }))] });
  });
  afterAll(async () => t.close());

  it('are written by the import and answer exactly what renderBounty shows', async () => {
    const res = await list();
    const rows = await t.ctx.database.db.selectFrom('bounties').selectAll().orderBy('id').execute();
    const now = Date.parse((res.json() as { now: string }[])[0]!.now);
    expect(res.body).toBe(rendered(rows, 'https://api.example.org', now));
  });

  // The page is joined by SQLite (bounty-page-sql.ts), by JavaScript on PostgreSQL: in the walk's order, not by id, and with a base URL JSON must escape.
  it('are joined into the page in the order of the list, with an escaped base URL', async () => {
    const statements: string[] = [];
    const repository = bountiesRepository(t.ctx.database.db, t.ctx.database.dialect, recorded(t.ctx.database.reads, statements));
    const filter = parseBountyQuery({ order_by: '-value_in_usdt', limit: 1000, offset: 0 });
    const base = 'https://example.org/"quoted"\\ä';
    const now = Date.UTC(2026, 5, 1, 12, 30, 45, 123);
    const page = await repository.list(filter, base, now);
    // SQLite joined them all, in order, with no fall-back to reading the texts into JavaScript (bodiesOf); PostgreSQL reads them.
    expect(statements.filter((text) => text.includes('json_each'))).toHaveLength(kind === 'sqlite' ? 1 : 0);
    expect(statements.filter((text) => text.includes('"head"'))).toHaveLength(kind === 'sqlite' ? 0 : 1);
    const rows = await t.ctx.database.db.selectFrom('bounties').selectAll().execute();
    const ordered = rows.sort((a, b) => (b.value_in_usdt_sort ?? '').localeCompare(a.value_in_usdt_sort ?? '') || b.id - a.id);
    expect(ordered.map((row) => row.id)).not.toEqual(ordered.map((row) => row.id).sort((a, b) => b - a));
    expect(Buffer.from(page.json).toString('utf8')).toBe(rendered(ordered, base, now));
    // The database wrote it: SQLite hands the bytes over as they are.
    if (kind === 'sqlite') expect(Buffer.isBuffer(page.json)).toBe(true);
  });

  it('answer the detail route too, byte for byte what renderBounty shows', async () => {
    for (const id of [1, 104]) {
      const res = await t.app.inject(`/api/v0.1/bounties/${id}`);
      expect(res.statusCode).toBe(200);
      const row = await t.ctx.database.db.selectFrom('bounties').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
      const now = Date.parse((res.json() as { now: string }).now);
      expect(res.body).toBe(JSON.stringify(renderBounty(row, 'https://api.example.org', now)));
    }
    expect((await t.app.inject('/api/v0.1/bounties/999')).statusCode).toBe(404);
  });

  it('follow a re-import that changes a bounty', async () => {
    const changed = { ...bountyFixtures()[0]!, id: 101, title: 'Renamed "by" the import', value_in_eth: '3.5' };
    await importOk(t.ctx, { bounties: [changed] });
    const body = (await list('&pk=101')).json() as { title: string; value_in_eth: number }[];
    expect(body.map((b) => [b.title, b.value_in_eth])).toEqual([['Renamed "by" the import', 3.5]]);
    const [stored] = await storedBodies(t.ctx.database, [101]);
    expect(stored!.head).toContain('"title":"Renamed \\"by\\" the import"');
  });

  it('are rendered from the row for a bounty stored without one, with the same answer', async () => {
    const before = await list();
    await t.ctx.database.db.deleteFrom('bounty_bodies').where('bounty_id', 'in', [1, 102]).execute();
    const after = await list();
    const now = (res: { body: string }) => (JSON.parse(res.body) as { now: string }[])[0]!.now;
    expect(after.body.replaceAll(now(after), 'NOW')).toBe(before.body.replaceAll(now(before), 'NOW'));
    expect((await storedBodies(t.ctx.database, [1, 102])).length).toBe(0);
  });
});
