import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from '../helpers/databases.js';
import { bountyFixtures, grantFixtures, profileFixtures } from '../publicdata/fixtures.js';

describe.each(databaseKinds)('stampgate data commands on %s', (kind) => {
  let test: TestDatabase;
  let env: Record<string, string>;
  let dir: string;
  const file = (name: string, content: unknown) => {
    const path = join(dir, name);
    writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
    return path;
  };

  beforeAll(async () => {
    test = await createTestDatabase(kind);
    dir = mkdtempSync(join(tmpdir(), 'stampgate-data-'));
    env = { DATABASE_URL: test.url, STAMPGATE_ENV: 'production', DATA_DIR: dir };
  });
  afterAll(async () => {
    await test.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('imports several files in order, reports bad records by file, position and field, and keeps the good ones', async () => {
    const people = file('people.json', { profiles: profileFixtures });
    const [good, ...rest] = bountyFixtures();
    const mixed = file('mixed.json', {
      grants: grantFixtures,
      bounties: [good, { ...rest[0], value_in_token: 'ten' }, ...rest.slice(1)],
    });
    const run = await runCli(['data', 'import', people, mixed], env);
    expect(run.code).toBe(0);
    expect(run.out.split('\n')).toEqual([
      `${people}: profiles 6 new, 0 updated; rounds 0 new, 0 updated; grants 0 new, 0 updated; contributions 0 new, 0 updated; bounties 0 new, 0 updated.`,
      `rejected ${mixed}: bounties[1].value_in_token: not a decimal`,
      `${mixed}: profiles 0 new, 0 updated; rounds 0 new, 0 updated; grants 4 new, 0 updated; contributions 0 new, 0 updated; bounties 5 new, 0 updated, 1 rejected.`,
    ]);

    const again = await runCli(['data', 'import', mixed, '--json'], env);
    expect(again.code).toBe(0);
    const [result] = again.json();
    expect(result.sections.bounties).toEqual({ created: 0, updated: 5, rejected: 1 });
    expect(result.problems).toEqual([{ at: 'bounties[1].value_in_token', problem: 'not a decimal' }]);
  });

  it('refuses unreadable files and documents that are not import documents (exit 1)', async () => {
    const missing = await runCli(['data', 'import', join(dir, 'nope.json')], env);
    expect(missing.code).toBe(1);
    expect(missing.err).toContain('Cannot read');
    const broken = await runCli(['data', 'import', file('broken.json', '{"bounties": [')], env);
    expect(broken.code).toBe(1);
    expect(broken.err).toContain('is not valid JSON');
    const list = await runCli(['data', 'import', file('list.json', [])], env);
    expect(list.code).toBe(1);
    expect(list.err).toContain('must be a JSON object');
    expect((await runCli(['data', 'import'], env)).code).toBe(2);
  });

  it('resets a profile’s export credentials', async () => {
    const reset = await runCli(['data', 'reset-key', 'ALICE'], env);
    expect(reset.code).toBe(0);
    expect(reset.out).toBe('alice had no export credentials.');
    const unknown = await runCli(['data', 'reset-key', 'nobody'], env);
    expect(unknown.code).toBe(1);
    expect(unknown.err).toContain('no profile with the handle nobody');
  });
});
