/**
 * The client as an outside project gets it: packed with its runtime dependencies bundled, then `npm install --offline` of that tarball alone into a
 * scratch project with an empty npm cache, so nothing can come from the registry or this
 * machine's cache. The installed package type-checks and makes a call against a real server.
 */
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, seedAccount, type TestApp } from '../helpers/app.js';
import { databaseKinds } from '../helpers/databases.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../', import.meta.url));
const packageDir = join(root, 'packages/client');
const address = '0x85b0f0e5d5c5f0ba5b3a4e1ed6e4a1e8ff0e2c4b';

describe('@stampgate/client installed from its packed tarball', () => {
  const work = mkdtempSync(join(tmpdir(), 'stampgate-client-tarball-'));
  const project = join(work, 'project');
  // An empty cache: with --offline, whatever the tarball lacks cannot be found anywhere.
  const offline = { ...process.env, npm_config_cache: join(work, 'empty-npm-cache'), npm_config_offline: 'true', npm_config_audit: 'false', npm_config_fund: 'false' };
  let tarball: string;

  beforeAll(async () => {
    // `npm pack` in packages/client runs the same two steps (prepack: build, then bundle-dependencies)
    // in place; here they run on a staged copy, so that the repository's dist and node_modules
    // never change under the tests that import them meanwhile.
    expect(existsSync(join(packageDir, 'dist/index.js')), 'packages/client/dist is missing: npm run build -w @stampgate/client').toBe(true);
    const staged = join(work, 'staged');
    for (const entry of ['package.json', 'README.md', 'dist']) cpSync(join(packageDir, entry), join(staged, entry), { recursive: true });
    await run(process.execPath, [join(packageDir, 'scripts/bundle-dependencies.mjs'), '--into', staged]);
    const { stdout } = await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', work], { cwd: staged, maxBuffer: 16 * 1024 * 1024 });
    const [pack] = JSON.parse(stdout) as { filename: string; bundled: string[] }[];
    tarball = join(work, pack!.filename);
    // Every runtime dependency travels in the tarball.
    const manifest = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
    expect(pack!.bundled).toEqual(expect.arrayContaining(Object.keys(manifest.dependencies ?? {})));
    mkdirSync(project);
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'scratch', private: true, type: 'module' }));
    await run('npm', ['install', tarball], { cwd: project, env: offline });
  }, 180_000);
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('type-checks a consumer against the installed declarations', async () => {
    writeFileSync(
      join(project, 'consumer.ts'),
      `import { createClient, type StampgateError } from '@stampgate/client';\n` +
        `const client = createClient({ baseUrl: 'http://localhost:8000', apiKey: 'k' });\n` +
        `const ok: Promise<{ score: string }> = client.score(1, '${address}');\n` +
        `export const handle = (e: StampgateError): string => e.code;\nvoid ok;\n`,
    );
    const tsc = join(root, 'node_modules/typescript/bin/tsc');
    const args = ['--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022', '--skipLibCheck', 'false', 'consumer.ts'];
    await expect(run(process.execPath, [tsc, ...args], { cwd: project })).resolves.toBeDefined();
  }, 60_000);

  describe.each(databaseKinds)('against a server on %s', (kind) => {
    let t: TestApp;
    let baseUrl: string;
    beforeAll(async () => {
      t = await createTestApp(kind);
      await t.app.listen({ host: '127.0.0.1', port: 0 });
      baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    });
    afterAll(async () => t.close());

    it('scores an address with an API key', async () => {
      const { key, scorer } = await seedAccount(t.ctx);
      writeFileSync(
        join(project, 'call.mjs'),
        `import { createClient } from '@stampgate/client';\n` +
          `const client = createClient({ baseUrl: process.env.BASE_URL, apiKey: process.env.API_KEY });\n` +
          `const result = await client.score(Number(process.env.SCORER_ID), '${address}');\n` +
          `console.log(JSON.stringify({ address: result.address, score: result.score, passing: result.passing_score }));\n`,
      );
      const { stdout } = await run(process.execPath, ['call.mjs'], { cwd: project, env: { ...process.env, BASE_URL: baseUrl, API_KEY: key, SCORER_ID: String(scorer.id) } });
      expect(JSON.parse(stdout)).toEqual({ address, score: expect.stringMatching(/^\d+\.\d{5}$/), passing: false });
    });
  });
});
