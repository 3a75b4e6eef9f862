import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/connection.js';
import { accountsRepository } from '../../src/scoring/accounts/accounts.repository.js';
import { apiKeyService, hashApiKey } from '../../src/scoring/accounts/api-keys.service.js';
import { apiKeysRepository } from '../../src/scoring/accounts/api-keys.repository.js';
import { databaseKinds, openMigratedTestDatabase, type TestDatabase } from '../helpers/databases.js';

describe.each(databaseKinds)('API keys on %s', (kind) => {
  let test: TestDatabase;
  let database: Database;
  let accountId: number;

  beforeEach(async () => {
    ({ test, database } = await openMigratedTestDatabase(kind));
    accountId = (await accountsRepository(database.db).insertAccount('a', Date.now())).id;
  });
  afterEach(async () => {
    await database.close();
    await test.drop();
  });

  function service(ttlMs = 0, clock: () => number = Date.now) {
    return apiKeyService(apiKeysRepository(database.db), accountsRepository(database.db), { ttlMs }, clock);
  }

  it('stores only a hash: neither the full key nor its secret is anywhere in the table', async () => {
    const { key, apiKey } = await service().create(accountId, { name: 'k', tier: 2 });
    expect(key).toMatch(/^[a-z0-9]{8}\.[A-Za-z0-9_-]{43}$/);
    const [prefix, secret] = key.split('.') as [string, string];
    expect(apiKey.prefix).toBe(prefix);
    const rows = await database.db.selectFrom('api_keys').selectAll().execute();
    const dump = JSON.stringify(rows);
    expect(dump).not.toContain(key);
    expect(dump).not.toContain(secret);
    expect(rows[0]!.key_hash).toBe(hashApiKey(key));
  });

  it('authenticates the full key and refuses a wrong secret, a malformed key and no key', async () => {
    const keys = service();
    const { key } = await keys.create(accountId, { tier: 3, canRead: false });
    await expect(keys.authenticate(key)).resolves.toMatchObject({ accountId, tier: 3, canSubmit: true, canRead: false });
    const wrongSecret = `${key.split('.')[0]}.${'A'.repeat(43)}`;
    await expect(keys.authenticate(wrongSecret)).rejects.toMatchObject({ code: 'invalid_api_key', status: 401 });
    await expect(keys.authenticate('nonsense')).rejects.toMatchObject({ code: 'invalid_api_key' });
    await expect(keys.authenticate(undefined)).rejects.toMatchObject({ code: 'missing_api_key', status: 401 });
  });

  it('refuses a revoked key, and revoking twice or an unknown prefix is an error', async () => {
    const keys = service();
    const { key, apiKey } = await keys.create(accountId);
    await keys.revoke(apiKey.prefix);
    await expect(keys.authenticate(key)).rejects.toMatchObject({ code: 'invalid_api_key' });
    await expect(keys.revoke(apiKey.prefix)).rejects.toMatchObject({ code: 'invalid_request' });
    await expect(keys.revoke('zzzzzzzz')).rejects.toMatchObject({ code: 'not_found' });
  });

  it('serves lookups from memory within the TTL and sees revocation by another process after it', async () => {
    let now = 1_000_000;
    const reader = service(5000, () => now);
    const other = service();
    const { key, apiKey } = await other.create(accountId);
    await reader.authenticate(key);
    await other.revoke(apiKey.prefix);
    now += 4000;
    await expect(reader.authenticate(key)).resolves.toMatchObject({ keyId: apiKey.id });
    now += 1001;
    await expect(reader.authenticate(key)).rejects.toMatchObject({ code: 'invalid_api_key' });
  });

  it('validates tier, name and account', async () => {
    const keys = service();
    await expect(keys.create(accountId, { tier: 5 })).rejects.toMatchObject({ code: 'invalid_request' });
    await expect(keys.create(accountId, { name: '  ' })).rejects.toMatchObject({ code: 'invalid_request' });
    await expect(keys.create(accountId + 100)).rejects.toMatchObject({ code: 'not_found' });
    expect(await database.db.selectFrom('api_keys').selectAll().execute()).toHaveLength(0);
  });
});
