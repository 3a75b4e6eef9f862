import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../helpers/app.js';
import { databaseKinds } from '../../../helpers/databases.js';
import { bountyFixtures, importOk, wallet } from '../../fixtures.js';

/** The fields of the interface's Bounty table that order_by took last, per bounty id (null: absent from the import record). */
const fields: Record<number, { issue: string; keywords: string; address: string | null; email: string | null; username: string | null }> = {
  1: { issue: '10', keywords: 'solidity,gas', address: wallet(3), email: 'zed@example.org', username: 'zed' },
  2: { issue: '9', keywords: 'Rust', address: null, email: null, username: null },
  3: { issue: '100', keywords: '', address: wallet(1), email: 'amy@example.org', username: 'Amy' },
  4: { issue: '9', keywords: 'docs', address: wallet(3), email: 'amy@example.org', username: 'bob' },
  5: { issue: '', keywords: 'docs', address: wallet(2), email: 'bob@example.org', username: 'Amy' },
  6: { issue: '2', keywords: 'Solidity', address: null, email: null, username: null },
};

function orderFixtures() {
  return bountyFixtures().map((bounty) => {
    // The shared fixture gives bounty 4 a fulfiller; here every fulfiller field comes from the table above.
    const { fulfiller_address: _a, fulfiller_github_username: _u, fulfiller_metadata: _m, paid: _p, ...rest } = bounty as Record<string, unknown>;
    const f = fields[bounty.id]!;
    return {
      ...rest,
      github_issue_number: f.issue,
      keywords: f.keywords,
      ...(f.address === null ? {} : { fulfiller_address: f.address }),
      ...(f.email === null ? {} : { fulfiller_email: f.email }),
      ...(f.username === null ? {} : { fulfiller_github_username: f.username }),
    };
  });
}

// Ascending and descending orders; rows without a value (null, or the empty text the import stores
// for an absent issue number or keywords) come last in both, by pk in the same direction; ties by pk.
const orders: [string, number[], number[]][] = [
  // By length, then text: whole numbers in numeric order (9 before 10, 10 before 100).
  ['github_issue_number', [6, 2, 4, 1, 3, 5], [3, 1, 4, 2, 6, 5]],
  // Code point order: capitals first.
  ['keywords', [2, 6, 4, 5, 1, 3], [1, 5, 4, 6, 2, 3]],
  ['fulfiller_address', [3, 5, 1, 4, 2, 6], [4, 1, 5, 3, 6, 2]],
  ['fulfiller_email', [3, 4, 5, 1, 2, 6], [1, 5, 4, 3, 6, 2]],
  ['fulfiller_github_username', [3, 5, 4, 1, 2, 6], [1, 4, 5, 3, 6, 2]],
  // The url is the base URL and the pk; `now` is the same for every bounty, so only the tiebreak orders.
  ['url', [1, 2, 3, 4, 5, 6], [6, 5, 4, 3, 2, 1]],
  ['now', [1, 2, 3, 4, 5, 6], [6, 5, 4, 3, 2, 1]],
];

describe.each(databaseKinds)('order_by on every scalar Bounty field, over HTTP on %s', (kind) => {
  let t: TestApp;
  let origin: string;
  beforeAll(async () => {
    t = await createTestApp(kind, { PUBLIC_CACHE_TTL: '0' });
    await importOk(t.ctx, { bounties: orderFixtures() });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    origin = `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`;
  });
  afterAll(async () => t.close());

  const get = (query: string) => fetch(`${origin}/api/v0.1/bounties/${query}`);
  const pks = async (query: string) => {
    const res = await get(query);
    expect(res.status, await res.clone().text()).toBe(200);
    return ((await res.json()) as { pk: number }[]).map((b) => b.pk);
  };

  it('stores the fixture as the table says (absent fields null or empty)', async () => {
    const rows = await t.ctx.database.db
      .selectFrom('bounties')
      .select(['id', 'github_issue_number', 'keywords', 'fulfiller_address', 'fulfiller_email', 'fulfiller_github_username'])
      .orderBy('id')
      .execute();
    expect(rows.map((r) => [r.id, r.github_issue_number, r.keywords, r.fulfiller_address, r.fulfiller_email, r.fulfiller_github_username])).toEqual(
      Object.entries(fields).map(([id, f]) => [Number(id), f.issue, f.keywords, f.address, f.email, f.username]),
    );
  });

  it.each(orders)('order_by=%s sorts both ways, rows without a value last', async (field, ascending, descending) => {
    expect(await pks(`?order_by=${field}`)).toEqual(ascending);
    expect(await pks(`?order_by=-${field}`)).toEqual(descending);
    // Pages meet where the walk of the rows with a value hands over to those without one.
    for (const [order, all] of [[field, ascending], [`-${field}`, descending]] as const) {
      const pages = [...(await pks(`?order_by=${order}&limit=3`)), ...(await pks(`?order_by=${order}&limit=3&offset=3`))];
      expect(pages, order).toEqual(all);
      expect(await pks(`?order_by=${order}&limit=2&offset=3`), order).toEqual(all.slice(3, 5));
    }
  });

  it('orders after filtering', async () => {
    expect(await pks('?is_open=true&order_by=-fulfiller_email')).toEqual([1, 3, 6, 2]);
    expect(await pks('?bounty_type=bug&order_by=github_issue_number')).toEqual([4, 1]);
  });

  it.each(['fulfiller_metadata', 'action_urls', 'paid', 'keywords_sort', '-fulfiller', 'github_issue', '--keywords'])(
    'still refuses order_by=%s with 400 and the standard body',
    async (order) => {
      const res = await get(`?order_by=${order}`);
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ detail: expect.stringContaining('order_by must be one of'), code: 'invalid_parameter' });
    },
  );
});
