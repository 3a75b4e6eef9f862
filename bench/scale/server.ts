/**
 * `stampgate serve` over a scale data set, in its own process, with its CPU time and resident
 * memory read from /proc (Linux): what one request costs the server, and whether a long walk
 * makes it grow.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { serverEnv } from '../fixtures.js';
import type { ScaleDataset } from './build.js';

const repoDir = fileURLToPath(new URL('../..', import.meta.url));

export interface ScaleServer {
  base: string;
  /** Server CPU (user + system) since start, ms. */
  cpuMs(): number;
  rssMb(): number;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function procStat(pid: number): string[] {
  const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name may hold spaces: fields are counted after its closing parenthesis.
  return text.slice(text.lastIndexOf(')') + 2).split(' ');
}

export async function startScaleServer(dataset: Pick<ScaleDataset, 'dataDir' | 'databaseUrl'>, env: Record<string, string> = {}): Promise<ScaleServer> {
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'serve'], {
    cwd: repoDir,
    env: { ...process.env, ...serverEnv(dataset.dataDir, dataset.databaseUrl), PORT: String(port), ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`stampgate serve exited with ${child.exitCode}`);
    const ready = await fetch(`${base}/health/ready`).then((r) => r.ok, () => false);
    if (ready) break;
    if (Date.now() > deadline) throw new Error('stampgate serve did not become ready in 120 s');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const pid = child.pid!;
  return {
    base,
    // utime and stime, fields 14 and 15 of /proc/<pid>/stat, in clock ticks of 10 ms.
    cpuMs: () => {
      const fields = procStat(pid);
      return (Number(fields[11]) + Number(fields[12])) * 10;
    },
    rssMb: () => {
      const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      return match ? Number(match[1]) / 1024 : Number.NaN;
    },
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
