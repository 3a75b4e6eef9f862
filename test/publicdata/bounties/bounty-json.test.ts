import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bountiesRepository } from '../../../src/publicdata/bounties/bounties.repository.js';
import { renderBounty } from '../../../src/publicdata/bounties/bounties.service.js';
import { bountyJson, bountyListJson } from '../../../src/publicdata/bounties/bounty-json.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { databaseKinds } from '../../helpers/databases.js';
import { bountyFixtures, importOk } from '../fixtures.js';
import { vocabularyFixtures } from '../vocabulary-fixtures.js';

describe.each(databaseKinds)('the bounty JSON writer on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(kind, { PUBLIC_CACHE_TTL: '0' });
    // Bounties with every vocabulary field, and the same records without them (ids moved past the first six).
    const plain = bountyFixtures().map((b) => ({ ...b, id: b.id + 100 }));
    await importOk(t.ctx, { bounties: [...vocabularyFixtures(), ...plain] });
  });
  afterAll(async () => t.close());

  it('writes exactly what JSON.stringify(renderBounty(row)) writes, for every stored row', async () => {
    const repository = bountiesRepository(t.ctx.database.db, t.ctx.database.dialect);
    const now = Date.UTC(2026, 5, 1, 12, 30, 45, 123);
    const rows = [];
    for (let id = 1; id <= 106; id++) {
      const row = await repository.get(id);
      if (row) rows.push(row);
    }
    expect(rows.length).toBe(12);
    const base = 'https://example.org/"quoted"\\';
    for (const row of rows) {
      expect(bountyJson(row, base, JSON.stringify(new Date(now).toISOString()))).toBe(JSON.stringify(renderBounty(row, base, now)));
    }
    expect(bountyListJson(rows, base, now)).toBe(JSON.stringify(rows.map((row) => renderBounty(row, base, now))));
    expect(bountyListJson([], base, now)).toBe('[]');
  });
});
