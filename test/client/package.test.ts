/**
 * What integrators install: `npm pack` of packages/client holds only the built files, its README and
 * package.json; the built ESM loads in plain Node (no TypeScript loader) and talks to a real server;
 * every export, and every member of the exported interfaces, carries a TSDoc comment.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { databaseKinds } from '../helpers/databases.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../', import.meta.url));
const packageDir = `${root}packages/client`;

function requireBuild() {
  // `npm ci` builds it (the root `prepare` script); a hand-made checkout needs `npm run build -w @stampgate/client`.
  expect(existsSync(`${packageDir}/dist/index.js`), 'packages/client/dist is missing: npm run build -w @stampgate/client').toBe(true);
}

describe('the @stampgate/client package', () => {
  it('packs only dist/**/*.js, dist/**/*.d.ts, README.md and package.json', async () => {
    requireBuild();
    const { stdout } = await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: packageDir });
    const [pack] = JSON.parse(stdout) as { name: string; files: { path: string }[] }[];
    expect(pack!.name).toBe('@stampgate/client');
    const files = pack!.files.map((f) => f.path);
    expect(files).toEqual(expect.arrayContaining(['README.md', 'package.json', 'dist/index.js', 'dist/index.d.ts', 'dist/generated/openapi.d.ts']));
    const unexpected = files.filter((f) => f !== 'README.md' && f !== 'package.json' && !/^dist\/.+\.(js|d\.ts)$/.test(f));
    expect(unexpected).toEqual([]);
  });

  it('documents every export and every member of the exported interfaces (TSDoc)', () => {
    const program = ts.createProgram([`${packageDir}/src/index.ts`], { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, noEmit: true, skipLibCheck: true });
    const checker = program.getTypeChecker();
    const index = program.getSourceFile(`${packageDir}/src/index.ts`)!;
    const undocumented: string[] = [];
    const documented = (symbol: ts.Symbol) => ts.displayPartsToString(symbol.getDocumentationComment(checker)).trim().length > 0;
    for (const exported of checker.getExportsOfModule(checker.getSymbolAtLocation(index)!)) {
      const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      if (symbol.getName() === 'paths') continue; // generated from the OpenAPI document, with its descriptions
      if (!documented(symbol)) undocumented.push(exported.getName());
      if (symbol.flags & (ts.SymbolFlags.Interface | ts.SymbolFlags.Class)) {
        for (const member of checker.getDeclaredTypeOfSymbol(symbol).getProperties()) {
          const own = member.declarations?.some((d) => d.getSourceFile().fileName.startsWith(`${packageDir}/src/`) && !d.getSourceFile().fileName.includes('/generated/'));
          if (own && !documented(member)) undocumented.push(`${exported.getName()}.${member.getName()}`);
        }
      }
    }
    expect(undocumented).toEqual([]);
  }, 60_000);
});

describe.each(databaseKinds)('the built @stampgate/client in plain Node against a server on %s', (kind) => {
  let t: TestApp;
  let baseUrl: string;
  beforeAll(async () => {
    t = await createTestApp(kind);
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => t.close());

  it('imports by its package name from dist and reads a typed error', async () => {
    requireBuild();
    const script = `
      import { createClient, StampgateError } from '@stampgate/client';
      const client = createClient({ baseUrl: process.env.BASE_URL, apiKey: 'nope' });
      const live = await client.api.GET('/health/live');
      const error = await client.getScore(1, '0x85b0f0e5d5c5f0ba5b3a4e1ed6e4a1e8ff0e2c4b').catch((e) => e);
      console.log(JSON.stringify({ live: live.data, isTyped: error instanceof StampgateError, status: error.status, code: error.code }));
    `;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: root, env: { ...process.env, BASE_URL: baseUrl } });
    expect(JSON.parse(stdout)).toEqual({ live: { status: 'ok' }, isTyped: true, status: 401, code: expect.stringMatching(/^[a-z_]+$/) });
  });
});
