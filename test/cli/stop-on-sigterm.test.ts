/**
 * Every documented way to run the server stops on SIGTERM sent to the first process, the one a
 * container platform or a supervisor signals: `node bin/stampgate.js serve`, `npm start` (npm
 * forwards the signal to its script) and `npx stampgate serve` (npm forwards it to `sh -c`,
 * which dies of it without passing it on; the server notices its parent gone). Within the
 * shutdown budget the port must be free and no process of the tree left, after a drain that
 * logs `shut down`. `npm start` must also not rebuild a current dist/.
 *
 * The package is laid out in a private directory as after `npm install`: dist/ transpiled by
 * esbuild (newer than the sources it links to), bin/ and scripts/ copied (Node resolves an import
 * from the real path of a file, so links would load the shared dist/) with package.json, the
 * sources and node_modules linked.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeSettings } from '../../src/config/index.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from '../helpers/databases.js';
import { buildCli, cliEnvironment, freePort, LoggedProcess, waitFor } from '../helpers/processes.js';

const repoDir = fileURLToPath(new URL('../../', import.meta.url));
const settingNames = describeSettings().map((s) => s.name);
const workDir = mkdtempSync(join(tmpdir(), 'stampgate-sigterm-'));
const shutdownBudgetMs = 5000;
const started: LoggedProcess[] = [];
const treePids = new Set<number>();
let root = '';

beforeAll(async () => {
  root = join(workDir, 'package');
  mkdirSync(root);
  await buildCli(root);
  // npm finds the package (and npx its bin) from the real path of package.json. npx installs the
  // package into its cache before it runs the bin, running `prepare` (the full build) on the
  // way: emptied here, as what is under test is the stop, not that build.
  rmSync(join(root, 'package.json'));
  const manifest = JSON.parse(readFileSync(join(repoDir, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  manifest.scripts.prepare = 'true';
  writeFileSync(join(root, 'package.json'), JSON.stringify(manifest, null, 2));
  for (const dir of ['bin', 'scripts']) mkdirSync(join(root, dir));
  copyFileSync(join(repoDir, 'bin', 'stampgate.js'), join(root, 'bin', 'stampgate.js'));
  copyFileSync(join(repoDir, 'scripts', 'build-if-stale.mjs'), join(root, 'scripts', 'build-if-stale.mjs'));
  for (const name of ['src', 'portal', 'tsconfig.json', 'tsconfig.build.json', 'package-lock.json']) symlinkSync(join(repoDir, name), join(root, name));
  // The portal's build output, as `vite build` leaves it (the server only serves it).
  mkdirSync(join(root, 'dist', 'portal-ui'));
  writeFileSync(join(root, 'dist', 'portal-ui', 'index.html'), '<!doctype html><title>portal</title>');
}, 60_000);

afterAll(() => {
  for (const pid of treePids) if (alive(pid)) process.kill(pid, 'SIGKILL');
  // The npx cache entry made for this package (a link to it).
  const npxCache = join(homedir(), '.npm', '_npx');
  for (const entry of existsSync(npxCache) ? readdirSync(npxCache) : []) {
    const manifest = join(npxCache, entry, 'package.json');
    if (existsSync(manifest) && readFileSync(manifest, 'utf8').includes(root)) rmSync(join(npxCache, entry), { recursive: true, force: true });
  }
  rmSync(workDir, { recursive: true, force: true });
});

/** The process and all its descendants now, from /proc. */
function processTree(pid: number): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // The command name may hold spaces and parentheses; the fields after its last ')' do not.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // Ended meanwhile.
    }
  }
  const tree = [pid];
  for (let i = 0; i < tree.length; i++) for (const [child, parent] of parents) if (parent === tree[i]) tree.push(child);
  return tree;
}

/** Running (a zombie has ended; only its parent has not collected it yet). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

function portAccepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

const commands: [string, string, string[]][] = [
  ['node bin/stampgate.js serve', process.execPath, ['bin/stampgate.js', 'serve']],
  ['npm start', 'npm', ['start']],
  ['npx stampgate serve', 'npx', ['stampgate', 'serve']],
];

describe.each(databaseKinds)('SIGTERM to the first process on %s', (kind) => {
  let test: TestDatabase;
  beforeAll(async () => {
    test = await createTestDatabase(kind);
  });
  afterAll(async () => test?.drop());

  it.each(commands)('%s: drains, frees its port and leaves no process behind', async (label, file, args) => {
    const port = await freePort();
    const mainMtime = statSync(join(root, 'dist', 'cli', 'main.js')).mtimeMs;
    const env = cliEnvironment(settingNames, {
      DATABASE_URL: test.url,
      PORT: String(port),
      HOST: '127.0.0.1',
      SHUTDOWN_TIMEOUT_MS: String(shutdownBudgetMs),
      DATA_DIR: mkdtempSync(join(workDir, 'data-')),
    });
    // As a supervisor runs it: nothing says a package runner is above (the runners set it themselves).
    delete env.npm_lifecycle_event;
    const proc = new LoggedProcess(label, spawn(file, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] }));
    started.push(proc);
    await waitFor(`${label} to serve`, 60_000, async () => {
      if (proc.exit) throw new Error(`${label} exited early ${JSON.stringify(proc.exit)}\n${proc.tail()}`);
      return (await fetch(`http://127.0.0.1:${port}/health/ready`).catch(() => null))?.status === 200;
    }, 100);
    const tree = processTree(proc.pid);
    for (const pid of tree) treePids.add(pid);
    expect(tree.length).toBeGreaterThanOrEqual(1);

    proc.child.kill('SIGTERM');
    await waitFor(`port ${port} to be free and the processes (${tree.join(', ')}) gone`, shutdownBudgetMs, async () =>
      !(await portAccepts(port)) && tree.every((pid) => !alive(pid)),
    );
    await proc.closed;
    const entries = proc.lines.filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as { msg: string; cause?: string });
    expect(entries.map((e) => e.msg), proc.tail()).toContain('shut down');
    expect(entries.find((e) => e.msg === 'shutting down')?.cause).toBe(label.startsWith('npx') ? 'parent exited' : 'SIGTERM');
    if (label === 'npm start') {
      expect(proc.lines).toContain('dist/ is up to date with its sources: not rebuilding.');
      expect(proc.lines.join('\n')).not.toContain('> stampgate@0.1.0 build');
      expect(statSync(join(root, 'dist', 'cli', 'main.js')).mtimeMs).toBe(mainMtime);
    }
    if (label !== 'npx stampgate serve') expect(proc.exit).toMatchObject({ code: 0 });
  }, 90_000);
});
