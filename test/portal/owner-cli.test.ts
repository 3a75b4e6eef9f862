import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from '../helpers/databases.js';

describe.each(databaseKinds)('stampgate accounts create --owner on %s', (kind) => {
  let test: TestDatabase;
  let env: Record<string, string>;
  beforeEach(async () => {
    test = await createTestDatabase(kind);
    env = { DATABASE_URL: test.url, STAMPGATE_ENV: 'production' };
  });
  afterEach(async () => test.drop());

  it('records the wallet that signs in to the portal for the account, once per wallet', async () => {
    const owner = '0xAbC0000000000000000000000000000000000001';
    const created = await runCli(['accounts', 'create', '--name', 'Lab', '--owner', owner, '--json'], env);
    expect(created.code).toBe(0);
    expect(created.json()).toMatchObject({ name: 'Lab', owner_address: owner.toLowerCase() });
    const again = await runCli(['accounts', 'create', '--name', 'Other', '--owner', owner], env);
    expect(again.code).toBe(1);
    expect(again.err).toContain('already owns an account');
    const bad = await runCli(['accounts', 'create', '--name', 'Bad', '--owner', '0x123'], env);
    expect(bad.code).not.toBe(0);
    const list = await runCli(['accounts', 'list', '--json'], env);
    expect(list.json().map((a: { name: string }) => a.name)).toEqual(['Lab']);
  });
});
