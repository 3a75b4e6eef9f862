import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

describe('stampgate serve start-up checks', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'stampgate-serve-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('stops with a message naming the problem when the catalogue file is malformed', async () => {
    const file = join(dir, 'catalogue.json');
    writeFileSync(file, JSON.stringify({ threshold: '20', platforms: [{ id: 'X', name: 'X', icon: 'x.svg', description: 'd', connectMessage: 'c', groups: [{ name: 'g', stamps: [{ name: 'P', description: 'p', weight: 'abc' }] }] }] }));
    const run = await runCli(['serve'], { DATA_DIR: dir, STAMPGATE_ENV: 'production', STAMP_CATALOGUE_FILE: file, PORT: '0' });
    expect(run.code).not.toBe(0);
    expect(run.err).toContain('platforms[0].groups[0].stamps[0].weight');
    expect(run.err).toContain(file);
  });

  it('stops when the catalogue file is missing', async () => {
    const run = await runCli(['serve'], { DATA_DIR: dir, STAMPGATE_ENV: 'production', STAMP_CATALOGUE_FILE: join(dir, 'nope.json'), PORT: '0' });
    expect(run.code).not.toBe(0);
    expect(run.err).toContain('nope.json');
  });

  it('lists a broken catalogue file with the other configuration problems, in one start', async () => {
    const file = join(dir, 'catalogue.json');
    writeFileSync(file, '{"threshold": 20,');
    const run = await runCli(['serve'], { DATA_DIR: dir, STAMPGATE_ENV: 'production', STAMP_CATALOGUE_FILE: file, PORT: '0' });
    expect(run.code).toBe(2);
    expect(run.err.split('\n')).toEqual([
      'Invalid configuration:',
      expect.stringMatching(/^ {2}- HOST must be set in production/),
      expect.stringMatching(/^ {2}- PUBLIC_BASE_URL must be set in production/),
      expect.stringContaining(`  - STAMP_CATALOGUE_FILE=${JSON.stringify(file)} is not a usable stamp catalogue: invalid JSON at line 1`),
    ]);
    expect(run.err).toContain('; for example STAMP_CATALOGUE_FILE=./stamp-catalogue.json');
  });
});
