import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/connection.js';
import { apiKeysRepository } from '../../src/scoring/accounts/api-keys.repository.js';
import { accountsRepository } from '../../src/scoring/accounts/accounts.repository.js';
import { apiKeyService } from '../../src/scoring/accounts/api-keys.service.js';
import { dayText, usageCounter, utcDay } from '../../src/portal/usage-counter.js';
import { usageRepository } from '../../src/portal/usage.repository.js';
import { databaseKinds, openMigratedTestDatabase, type TestDatabase } from '../helpers/databases.js';


describe('UTC days', () => {
  it('numbers days from 1970-01-01 in UTC and prints them back', () => {
    expect(utcDay(Date.parse('2026-11-25T23:59:59.999Z'))).toBe(utcDay(Date.parse('2026-11-25T00:00:00Z')));
    expect(utcDay(Date.parse('2026-11-26T00:00:00Z')) - utcDay(Date.parse('2026-11-25T00:00:00Z'))).toBe(1);
    expect(dayText(utcDay(Date.parse('2026-11-25T13:00:00+05:00')))).toBe('2026-11-25');
  });
});

describe.each(databaseKinds)('usage counters on %s', (kind) => {
  let test: TestDatabase;
  let database: Database;
  let keyIds: number[];

  beforeEach(async () => {
    ({ test, database } = await openMigratedTestDatabase(kind));
    const account = await accountsRepository(database.db).insertAccount('a', Date.now());
    const keys = apiKeyService(apiKeysRepository(database), accountsRepository(database.db));
    keyIds = [(await keys.create(account.id)).apiKey.id, (await keys.create(account.id)).apiKey.id];
  });
  afterEach(async () => {
    await database.close();
    await test.drop();
  });

  it('adds the counts of several processes to the same rows, per key and day', async () => {
    let now = Date.parse('2026-11-25T23:59:00Z');
    const clock = () => now;
    const repo = usageRepository(database.db);
    const a = usageCounter(repo, { flushMs: 60_000, clock });
    const b = usageCounter(repo, { flushMs: 60_000, clock });
    a.record(keyIds[0]!, false);
    a.record(keyIds[0]!, true);
    b.record(keyIds[0]!, false);
    b.record(keyIds[1]!, true);
    await a.flush();
    await b.flush();
    now += 2 * 60_000; // past midnight: a new day
    a.record(keyIds[0]!, false);
    await a.stop();
    const today = utcDay(now);
    const rows = await repo.read(keyIds, today - 1, today);
    expect(rows).toEqual([
      { key_id: keyIds[0], day: today - 1, requests: 3, rate_limited: 1 },
      { key_id: keyIds[0], day: today, requests: 1, rate_limited: 0 },
      { key_id: keyIds[1], day: today - 1, requests: 1, rate_limited: 1 },
    ]);
    expect(a.unflushed(new Set(keyIds), today - 1, today)).toEqual([]);
  });

  it('keeps the counts of a failed flush for the next one, and logs the outage once', async () => {
    const repo = usageRepository(database.db);
    let failing = true;
    const flaky = { ...repo, add: async (rows: Parameters<typeof repo.add>[0]) => (failing ? Promise.reject(new Error('database down')) : repo.add(rows)) };
    const warnings: string[] = [];
    const counter = usageCounter(flaky, { flushMs: 60_000, log: { warn: (_o, msg) => warnings.push(msg), info: () => {} } });
    counter.record(keyIds[0]!, false);
    await counter.flush();
    counter.record(keyIds[0]!, true);
    await counter.flush();
    expect(warnings).toHaveLength(1);
    const today = utcDay(Date.now());
    expect(counter.unflushed(new Set(keyIds), today, today)).toEqual([{ key_id: keyIds[0], day: today, requests: 2, rate_limited: 1 }]);
    failing = false;
    await counter.flush();
    expect(await repo.read(keyIds, today, today)).toEqual([{ key_id: keyIds[0], day: today, requests: 2, rate_limited: 1 }]);
    expect(await repo.read(keyIds, today - 30, today - 1)).toEqual([]);
  });
});
