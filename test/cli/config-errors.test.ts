/**
 * A real `stampgate serve` process with three independent configuration problems: it must name
 * all three in one list on its first start, exit 2, and print no stack trace. The process runs
 * src/ transpiled by esbuild (buildCli), as the shutdown tests do.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeSettings } from '../../src/config/index.js';
import { buildCli, cliEnvironment, freePort, LoggedProcess, withTimeout } from '../helpers/processes.js';

const workDir = mkdtempSync(join(tmpdir(), 'stampgate-config-errors-'));
let cliPath = '';
const processes: LoggedProcess[] = [];

beforeAll(async () => {
  mkdirSync(join(workDir, 'build'));
  cliPath = await buildCli(join(workDir, 'build'));
}, 60_000);

afterAll(async () => {
  for (const proc of processes) if (!proc.exit) proc.child.kill('SIGKILL');
  await Promise.all(processes.map((p) => withTimeout(p.exited, 10_000, p.label).catch(() => {})));
  rmSync(workDir, { recursive: true, force: true });
});

describe('stampgate serve with a bad configuration', () => {
  it('prints every problem once, as a list, and exits 2 without a stack trace', async () => {
    const dataDir = join(workDir, 'data');
    const env = cliEnvironment(describeSettings().map((s) => s.name), {
      STAMPGATE_ENV: 'production',
      PUBLIC_BASE_URL: 'scores.example.org',
      HOST: '0.0.0.0:8000',
      OAUTH_CLIENT_ID: 'client-id',
      OAUTH_CLIENT_SECRET: 'client-secret',
      DATA_DIR: dataDir,
      PORT: String(await freePort()),
    });
    const proc = new LoggedProcess('serve', spawn(process.execPath, [cliPath, 'serve'], { cwd: workDir, env, stdio: ['ignore', 'pipe', 'pipe'] }));
    processes.push(proc);
    const exit = await withTimeout(proc.exited, 20_000, 'a refused serve to exit');
    await proc.closed;
    const stderr = proc.stderr.join('');

    expect(exit.code).toBe(2);
    expect(proc.lines.filter((line) => line !== '')).toEqual([]);
    expect(stderr.trimEnd().split('\n')).toEqual([
      'Invalid configuration:',
      '  - HOST="0.0.0.0:8000" is not an IP address or host name (without a port or brackets); for example HOST=0.0.0.0',
      '  - PUBLIC_BASE_URL="scores.example.org" is not an absolute URL; for example PUBLIC_BASE_URL=https://scores.example.org',
      expect.stringMatching(/^ {2}- SESSION_SECRET must be set \(at least 32 characters\) in production when OAUTH_CLIENT_ID .*; for example SESSION_SECRET=\$\(openssl rand -base64 32\)$/),
    ]);
    expect(stderr).not.toMatch(/^\s+at /m);
    // Refused before anything was opened: no database file, no generated key.
    expect(() => readdirSync(dataDir)).toThrow(/ENOENT/);
  }, 60_000);
});
