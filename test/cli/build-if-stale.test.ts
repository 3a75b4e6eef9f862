/**
 * `npm start`'s prestart (scripts/build-if-stale.mjs) builds only when dist/ is missing or older
 * than a source, in a scratch package whose `build` script just notes that it ran. (That a
 * real `npm start` on a current dist/ starts without building is in stop-on-sigterm.test.ts.)
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const script = fileURLToPath(new URL('../../scripts/build-if-stale.mjs', import.meta.url));
let root = '';

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'stampgate-prestart-'));
  writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'scratch', private: true, scripts: { build: 'node -e "require(\'fs\').writeFileSync(\'built\', \'\')"' } }));
  for (const dir of ['src', 'portal/src', 'dist/cli', 'dist/portal-ui']) mkdirSync(join(root, dir), { recursive: true });
  for (const file of ['src/main.ts', 'portal/src/app.tsx', 'tsconfig.json', 'tsconfig.build.json', 'package-lock.json']) writeFileSync(join(root, file), '');
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

function prestart(): { out: string; built: boolean } {
  rmSync(join(root, 'built'), { force: true });
  const result = spawnSync(process.execPath, [script], { cwd: root, encoding: 'utf8' });
  expect(result.status, result.stderr).toBe(0);
  return { out: result.stdout, built: existsSync(join(root, 'built')) };
}

/** Sets a file's modification time to `seconds` from now. */
function touch(file: string, seconds: number): void {
  const at = new Date(Date.now() + seconds * 1000);
  utimesSync(join(root, file), at, at);
}

describe('build-if-stale', () => {
  it('builds when an output is missing', () => {
    const run = prestart();
    expect(run.out).toContain('Building (dist/cli/main.js is missing)');
    expect(run.built).toBe(true);
  });

  it('does not build when every output is newer than every input', () => {
    for (const output of ['dist/cli/main.js', 'dist/portal-ui/index.html']) writeFileSync(join(root, output), '');
    for (const input of ['src', 'src/main.ts', 'portal', 'portal/src', 'portal/src/app.tsx', 'tsconfig.json', 'tsconfig.build.json', 'package-lock.json']) touch(input, -60);
    const run = prestart();
    expect(run.out).toContain('not rebuilding');
    expect(run.built).toBe(false);
  });

  it.each(['src/main.ts', 'portal/src/app.tsx', 'tsconfig.build.json', 'package-lock.json'])('builds when %s changed after the build', (input) => {
    touch(input, 60);
    const run = prestart();
    expect(run.out).toContain('changed since the last build');
    expect(run.built).toBe(true);
    touch(input, -60);
    expect(prestart().built).toBe(false);
  });

  it('builds when a source file was deleted (its folder changed)', () => {
    touch('src', 60);
    expect(prestart().built).toBe(true);
    touch('src', -60);
  });
});
