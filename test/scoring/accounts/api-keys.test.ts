import { Value } from '@sinclair/typebox/value';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/connection.js';
import { accountsRepository } from '../../../src/scoring/accounts/accounts.repository.js';
import { apiKeyService, hashApiKey } from '../../../src/scoring/accounts/api-keys.service.js';
import { apiKeysRepository } from '../../../src/scoring/accounts/api-keys.repository.js';
import { parsePermissions, permissionNames } from '../../../src/scoring/accounts/permissions.js';
import { PermissionListSchema } from '../../../src/scoring/accounts/permissions.schema.js';
import { databaseKinds, openMigratedTestDatabase, type TestDatabase } from '../../helpers/databases.js';

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
    return apiKeyService(apiKeysRepository(database), accountsRepository(database.db), { ttlMs }, clock);
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
    const { key } = await keys.create(accountId, { tier: 3, permissions: ['submit_passports'] });
    await expect(keys.authenticate(key)).resolves.toMatchObject({ accountId, tier: 3, permissions: ['submit_passports'] });
    const wrongSecret = `${key.split('.')[0]}.${'A'.repeat(43)}`;
    await expect(keys.authenticate(wrongSecret)).rejects.toMatchObject({ code: 'invalid_api_key', status: 401 });
    await expect(keys.authenticate('nonsense')).rejects.toMatchObject({ code: 'invalid_api_key' });
    await expect(keys.authenticate(undefined)).rejects.toMatchObject({ code: 'missing_api_key', status: 401 });
  });

  it('after a key is verified from memory, refuses every other secret of its prefix and still takes the key', async () => {
    let now = 1_000_000;
    const keys = service(5000, () => now);
    const { key } = await keys.create(accountId, { tier: 2 });
    await expect(keys.authenticate(key)).resolves.toMatchObject({ tier: 2 });
    expect(keys.cachedCaller(key)).toMatchObject({ tier: 2 });
    const [prefix, secret] = key.split('.') as [string, string];
    const last = secret.at(-1) === 'A' ? 'B' : 'A';
    const first = secret[0] === 'A' ? 'B' : 'A';
    for (const forged of [`${prefix}.${secret.slice(0, -1)}${last}`, `${prefix}.${first}${secret.slice(1)}`, `${prefix}.${'A'.repeat(43)}`]) {
      expect(() => keys.cachedCaller(forged)).toThrow(expect.objectContaining({ code: 'invalid_api_key' }));
      await expect(keys.authenticate(forged)).rejects.toMatchObject({ code: 'invalid_api_key' });
      expect(keys.cachedCaller(key)).toMatchObject({ tier: 2 });
    }
    // A longer or shorter text never equals the key.
    expect(() => keys.cachedCaller(`${key}x`)).not.toThrow();
    expect(keys.cachedCaller(`${key}x`)).toBeUndefined();
    now += 5001;
    expect(keys.cachedCaller(key)).toBeUndefined();
    await expect(keys.authenticate(key)).resolves.toMatchObject({ tier: 2 });
  });

  it('drops stale entries, with the key each verified, at the next read of any key', async () => {
    let now = 1_000_000;
    const keys = service(5000, () => now);
    const { key: first } = await keys.create(accountId);
    const { key: second } = await keys.create(accountId);
    await keys.authenticate(first);
    now += 6000;
    await keys.authenticate(second);
    // Back within the first entry's TTL: it would answer from memory had it been kept.
    now -= 6000;
    expect(keys.cachedCaller(first)).toBeUndefined();
    now += 6000;
    expect(keys.cachedCaller(second)).toMatchObject({ accountId });
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

  it('gives a new key every permission but historical_endpoint, and the older shorthand still drops one', async () => {
    const keys = service();
    const plain = await keys.create(accountId);
    expect(plain.apiKey.permissions).toEqual(['submit_passports', 'read_scores', 'create_scorers']);
    await expect(keys.authenticate(plain.key)).resolves.toMatchObject({ permissions: ['submit_passports', 'read_scores', 'create_scorers'] });
    const noRead = await keys.create(accountId, { canRead: false });
    expect(noRead.apiKey.permissions).toEqual(['submit_passports', 'create_scorers']);
    const chosen = await keys.create(accountId, { permissions: ['historical_endpoint', 'read_scores', 'read_scores'] });
    expect(chosen.apiKey.permissions).toEqual(['read_scores', 'historical_endpoint']);
    const none = await keys.create(accountId, { permissions: [] });
    expect(none.apiKey.permissions).toEqual([]);
    const row = await database.db.selectFrom('api_keys').selectAll().where('prefix', '=', chosen.apiKey.prefix).executeTakeFirstOrThrow();
    expect([row.can_submit, row.can_read, row.can_create_scorers, row.can_read_history].map(Number)).toEqual([0, 1, 0, 1]);
  });

  it('refuses an unknown permission name and creates nothing', async () => {
    const keys = service();
    await expect(keys.create(accountId, { permissions: ['read_scores', 'admin' as never] })).rejects.toMatchObject({
      code: 'invalid_request',
      message: expect.stringContaining('"admin"'),
    });
    expect(await database.db.selectFrom('api_keys').selectAll().execute()).toHaveLength(0);
  });

  it('changes a key’s permissions at once in its own process even with a long cache, and tells the others', async () => {
    const changed: string[] = [];
    const keys = apiKeyService(apiKeysRepository(database), accountsRepository(database.db), {
      ttlMs: 600_000,
      notifyChange: async (prefix) => void changed.push(prefix),
    });
    const { key, apiKey } = await keys.create(accountId);
    await expect(keys.authenticate(key)).resolves.toMatchObject({ permissions: ['submit_passports', 'read_scores', 'create_scorers'] });
    const updated = await keys.setPermissions(apiKey.prefix, ['historical_endpoint', 'read_scores']);
    expect(updated.permissions).toEqual(['read_scores', 'historical_endpoint']);
    expect(changed).toEqual([apiKey.prefix]);
    await expect(keys.authenticate(key)).resolves.toMatchObject({ permissions: ['read_scores', 'historical_endpoint'] });
    expect((await keys.find(apiKey.prefix)).permissions).toEqual(['read_scores', 'historical_endpoint']);
  });

  it('refuses to change an unknown, foreign or revoked key, or to set an unknown permission, changing nothing', async () => {
    const keys = service();
    const { apiKey } = await keys.create(accountId);
    const other = (await accountsRepository(database.db).insertAccount('b', Date.now())).id;
    await expect(keys.setPermissions('zzzzzzzz', ['read_scores'])).rejects.toMatchObject({ code: 'not_found' });
    await expect(keys.setPermissions(apiKey.prefix, ['read_scores'], { accountId: other })).rejects.toMatchObject({ code: 'not_found' });
    await expect(keys.find(apiKey.prefix, { accountId: other })).rejects.toMatchObject({ code: 'not_found' });
    await expect(keys.setPermissions(apiKey.prefix, ['everything' as never])).rejects.toMatchObject({ code: 'invalid_request' });
    expect((await keys.find(apiKey.prefix, { accountId })).permissions).toEqual(['submit_passports', 'read_scores', 'create_scorers']);
    await keys.revoke(apiKey.prefix);
    await expect(keys.setPermissions(apiKey.prefix, ['read_scores'])).rejects.toMatchObject({ code: 'invalid_request', message: expect.stringContaining('revoked') });
    expect((await keys.find(apiKey.prefix)).permissions).toEqual(['submit_passports', 'read_scores', 'create_scorers']);
  });
});

describe('permission names', () => {
  it('parses comma lists into canonical order and names every unknown entry', () => {
    expect(parsePermissions(' historical_endpoint , submit_passports,,submit_passports')).toEqual(['submit_passports', 'historical_endpoint']);
    expect(parsePermissions('')).toEqual([]);
    expect(() => parsePermissions('read_scores,Read_Scores,admin')).toThrow('Unknown permissions "Read_Scores", "admin"');
    expect(permissionNames).toEqual(['submit_passports', 'read_scores', 'create_scorers', 'historical_endpoint']);
  });

  it('validates an HTTP permission list: known names, each once', () => {
    expect(Value.Check(PermissionListSchema, ['read_scores', 'historical_endpoint'])).toBe(true);
    expect(Value.Check(PermissionListSchema, [])).toBe(true);
    expect(Value.Check(PermissionListSchema, ['read_scores', 'read_scores'])).toBe(false);
    expect(Value.Check(PermissionListSchema, ['admin'])).toBe(false);
  });
});
