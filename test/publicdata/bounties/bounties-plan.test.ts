import { CompiledQuery } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedBounties } from '../../../bench/bounties-seed.js';
import { bountiesRepository, COUNT_AHEAD } from '../../../src/publicdata/bounties/bounties.repository.js';
import { type BountyListQuery, parseBountyQuery } from '../../../src/publicdata/bounties/bounties.service.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { databaseKinds } from '../../helpers/databases.js';

const SEEDED = 3000;

/** The benchmark's query: two filters and an order. */
const benchQuery = { is_open: 'true', experience_level: 'beginner', order_by: '-value_in_eth', limit: 50, offset: 0 };

describe.each(databaseKinds)('bounty list query plans on %s (bench seed)', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(kind);
    const { firstId, lastId } = await seedBounties(t.ctx, SEEDED);
    expect(lastId - firstId + 1).toBe(SEEDED);
    await t.ctx.database.db.executeQuery(CompiledQuery.raw(kind === 'postgres' ? 'analyze bounties' : 'analyze'));
  }, 60_000);
  afterAll(async () => t.close());

  async function plan(query: Partial<BountyListQuery>): Promise<string> {
    const compiled = bountiesRepository(t.ctx.database.db, t.ctx.database.dialect)
      .listQuery(parseBountyQuery({ limit: 100, offset: 0, ...query }))
      .compile();
    const prefix = kind === 'postgres' ? 'explain ' : 'explain query plan ';
    const result = await t.ctx.database.db.executeQuery(CompiledQuery.raw(prefix + compiled.sql, [...compiled.parameters]));
    return (result.rows as Record<string, string>[]).map((row) => row['QUERY PLAN'] ?? row.detail).join('\n');
  }

  it('seeds realistic bounties the list serves', async () => {
    const res = await t.app.inject(`/api/v0.1/bounties/?is_open=true&experience_level=beginner&order_by=-value_in_eth&limit=50`);
    expect(res.statusCode).toBe(200);
    const body = res.json() as { is_open: boolean; experience_level: string; value_in_eth: number }[];
    expect(body).toHaveLength(50);
    expect(body.every((b) => b.is_open && b.experience_level === 'Beginner')).toBe(true);
    expect(body.map((b) => b.value_in_eth)).toEqual([...body.map((b) => b.value_in_eth)].sort((a, b) => b - a));
  });

  // Index-only: the filter columns are in the order index and the walk selects ids alone (texts are looked up after it).
  it('walks the order_by index for two filters and an order, without sorting or reading the table', async () => {
    const text = await plan(benchQuery);
    if (kind === 'sqlite') {
      expect(text).toContain('USING COVERING INDEX bounties_value_in_eth_sort_filters_idx');
      expect(text).not.toContain('TEMP B-TREE');
    } else {
      expect(text).toMatch(/Index Only Scan Backward using bounties_value_in_eth_sort_filters_idx/);
      expect(text).not.toMatch(/\bSort\b/);
    }
  });

  // SQLite's plan text names indexes; PostgreSQL's choice depends on statistics, and the test above covers it.
  if (kind === 'sqlite') it('uses (is_open, web3_created) for open bounties in the default order, and an index for every order', async () => {
    expect(await plan({ is_open: 'true', bounty_type: 'feature' })).toContain('USING COVERING INDEX bounties_open_web3_created_filters_idx (is_open=?)');
    for (const order of ['title', '-expires_date', 'value_in_usdt', '-status', 'pk']) {
      const text = await plan({ is_open: 'false', experience_level: 'adv', order_by: order });
      expect(text, order).not.toContain('TEMP B-TREE');
    }
    expect(await plan({ github_url: 'https://github.com/ethereum/core/issues/1' })).toContain('bounties_github_url_idx');
  });

  // The fields order_by took last (migration 0024): each walks its own index in both directions, no sort.
  const lastOrderFields: [string, string][] = [
    ['github_issue_number', 'bounties_github_issue_number_idx'],
    ['keywords', 'bounties_keywords_prefix_idx'],
    ['fulfiller_address', 'bounties_fulfiller_address_idx'],
    ['fulfiller_email', 'bounties_fulfiller_email_idx'],
    ['fulfiller_github_username', 'bounties_fulfiller_github_username_idx'],
  ];
  it.each(lastOrderFields)('orders by %s through %s, without sorting', async (field, index) => {
    for (const order of [field, `-${field}`]) {
      const text = await plan({ order_by: order });
      if (kind === 'sqlite') {
        expect(text, order).toMatch(new RegExp(`USING (COVERING )?INDEX ${index} `));
        expect(text, order).not.toContain('TEMP B-TREE');
      } else {
        expect(text, order).toMatch(new RegExp(`Index (Only )?Scan (Backward )?using ${index}`));
        expect(text, order).not.toMatch(/\bSort\b/);
      }
    }
  });

  // The original client's selective filters (values the seed makes rare) are index lookups, not scans.
  const clientFilters: [string, Partial<BountyListQuery>, RegExp, RegExp][] = [
    ['idx_status', { idx_status: 'submitted' }, /SEARCH bounties USING INDEX bounties_status_idx \(status=\?\)/, /Index Scan on bounties_status_idx/],
    ['network', { network: 'polygon' }, /SEARCH bounties USING INDEX bounties_network_idx \(network=\?\)/, /Index Scan on bounties_network_idx/],
    [
      'standard_bounties_id',
      { standard_bounties_id: '300,303' },
      /SEARCH bounties USING INDEX bounties_standard_bounties_id_idx \(standard_bounties_id=\?\)/,
      /Index Scan using bounties_standard_bounties_id_idx/,
    ],
    // SQLite may range over id inside any (x, id) index (a skip-scan of a one-value column) or the table's own key.
    // With the documented deep-paging order (order_by=pk): under another order SQLite, knowing the LIMIT, walks that
    // order's index (a literal LIMIT shows here the plan a bound one got from its second run on).
    ['pk__gt', { pk__gt: 2900, order_by: 'pk' }, /SEARCH bounties USING (INTEGER PRIMARY KEY \(rowid>\?\)|INDEX \w+ \(.*\bid>\?\))/, /Index (Only )?Scan using bounties_pkey on bounties[\s\S]*Index Cond: \(id > 2900\)/],
  ];
  it.each(clientFilters)('looks %s up through an index', async (_name, query, sqlitePlan, postgresPlan) => {
    const text = await plan(query);
    expect(text).toMatch(kind === 'sqlite' ? sqlitePlan : postgresPlan);
    expect(text).not.toMatch(kind === 'sqlite' ? /^SCAN bounties\b/m : /Seq Scan/);
  });

  it('looks interested workers and fulfillers up through bounty_people, and owners through lower(username)', async () => {
    for (const query of [{ started: 'dev5' }, { fulfiller_github_username: 'dev5' }]) {
      expect(await plan(query)).toMatch(kind === 'sqlite' ? /SEARCH bounty_people USING COVERING INDEX \w+ \(role=\? AND username_key=\?\)/ : /Index Only Scan \w* ?using bounty_people_pk/);
    }
    expect(await plan({ bounty_owner_github_username: 'owner3' })).toContain('bounties_owner_username_key_idx');
  });

  it('counts X-Total-Count exactly from a short page, and up to COUNT_AHEAD past a full one, with the next link', async () => {
    const total = async (query: string) => {
      const res = await t.app.inject(`/api/v0.1/bounties/${query}`);
      expect(res.statusCode, res.body).toBe(200);
      return { total: res.headers['x-total-count'], next: res.headers.link !== undefined, rows: (res.json() as unknown[]).length };
    };
    expect(SEEDED).toBeGreaterThan(10 + COUNT_AHEAD);
    expect(await total('?limit=10')).toEqual({ total: String(10 + COUNT_AHEAD), next: true, rows: 10 });
    expect(await total(`?limit=10&offset=${SEEDED - 10}`)).toEqual({ total: String(SEEDED), next: false, rows: 10 });
    expect(await total(`?limit=10&offset=${SEEDED - 4}`)).toEqual({ total: String(SEEDED), next: false, rows: 4 });
    expect(await total(`?limit=10&offset=${SEEDED + 5}`)).toEqual({ total: String(SEEDED), next: false, rows: 0 });
    // Nulls last: a nullable order's page runs into the rows without a value and stays exact.
    expect(await total(`?limit=10&offset=${SEEDED - 4}&order_by=-balance`)).toEqual({ total: String(SEEDED), next: false, rows: 4 });
  });

  // The count looks vocabulary filters up as the stored values that contain the text (migration 0021): the same matches as the LIKE.
  it('counts vocabulary filters exactly as their substring match, through the (column, is_open, expires_date) index', async () => {
    const rows = await t.ctx.database.db.selectFrom('bounties').selectAll().execute();
    const now = Date.now();
    const cases: [string, (b: (typeof rows)[number]) => boolean][] = [
      ['experience_level=GIN', (b) => /gin/i.test(b.experience_level)],
      ['experience_level=beginner&is_open=true', (b) => /beginner/i.test(b.experience_level) && b.is_open === 1 && b.expires_date > now],
      ['experience_level=inter,ADV&is_open=false', (b) => /inter|adv/i.test(b.experience_level) && !(b.is_open === 1 && b.expires_date > now)],
      ['project_length=s&bounty_type=bug,docu&is_open=true', (b) => /s/i.test(b.project_length) && /bug|docu/i.test(b.bounty_type) && b.is_open === 1 && b.expires_date > now],
      ['bounty_type=nothing-like-it', () => false],
    ];
    for (const [query, matches] of cases) {
      const res = await t.app.inject(`/api/v0.1/bounties/?limit=10&${query}`);
      expect(res.statusCode, res.body).toBe(200);
      const expected = rows.filter(matches).length;
      expect(res.headers['x-total-count'], query).toBe(String(Math.min(expected, 10 + COUNT_AHEAD)));
    }
    expect(rows.filter(cases[0]![1]).length).toBeGreaterThan(0);
    const repository = bountiesRepository(t.ctx.database.db, t.ctx.database.dialect);
    const count = repository.countQuery(parseBountyQuery({ is_open: 'true', experience_level: 'beginner', limit: 50, offset: 0 })).compile();
    const prefix = kind === 'postgres' ? 'explain ' : 'explain query plan ';
    const result = await t.ctx.database.db.executeQuery(CompiledQuery.raw(prefix + count.sql, [...count.parameters]));
    const text = (result.rows as Record<string, string>[]).map((row) => row['QUERY PLAN'] ?? row.detail).join('\n');
    if (kind === 'sqlite') expect(text).toContain('USING COVERING INDEX bounties_experience_level_open_idx (experience_level=? AND is_open=? AND expires_date>?)');
    else expect(text).toMatch(/Index Only Scan using bounties_experience_level_open_idx/);
  });

  it('searches raw_data through the index of its first 200 characters, not the table', async () => {
    const text = await plan({ raw_data: 'solidity,gas' });
    if (kind === 'sqlite') {
      expect(text).toContain('SCAN bounties USING COVERING INDEX bounties_raw_data_prefix_idx');
      expect(text).toContain('SCAN bounties USING COVERING INDEX bounties_web3_created_filters_idx');
      expect(text).not.toContain('TEMP B-TREE');
    }
    const res = await t.app.inject('/api/v0.1/bounties/?raw_data=SOLIDITY,gas&limit=100');
    const body = res.json() as { raw_data?: unknown }[];
    expect(body.length).toBeGreaterThan(0);
    const stored = await t.ctx.database.db.selectFrom('bounties').select(['id', 'raw_data']).execute();
    const expected = stored.filter((b) => b.raw_data !== null && /solidity/i.test(b.raw_data.slice(0, 200)) && /gas/i.test(b.raw_data.slice(0, 200)));
    expect(res.headers['x-total-count']).toBe(String(expected.length));
  });

  it('matches raw_data within the first 200 characters of the raw record only (the documented bound)', async () => {
    const db = t.ctx.database.db;
    const [first, second] = (await db.selectFrom('bounties').select('id').orderBy('id').limit(2).execute()).map((r) => r.id);
    await db.updateTable('bounties').set({ raw_data: `{"text":"${'x'.repeat(180)}NeedleA"}` }).where('id', '=', first!).execute();
    await db.updateTable('bounties').set({ raw_data: `{"text":"${'x'.repeat(200)}NeedleB"}` }).where('id', '=', second!).execute();
    const found = async (text: string) => ((await t.app.inject(`/api/v0.1/bounties/?raw_data=${text}`)).json() as { pk: number }[]).map((b) => b.pk);
    expect(await found('needlea')).toEqual([first]);
    expect(await found('needleb')).toEqual([]);
  });
});
