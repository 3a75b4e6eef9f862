/**
 * A server under test in a child process (bench/child.ts), driven over the IPC
 * channel; optionally under V8's CPU profiler.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Op, Reply, Request, ServerUsage, TargetCheck, TargetInfo, TargetSpec } from './protocol.js';
import type { RunningTarget } from './target.js';

const benchDir = fileURLToPath(new URL('.', import.meta.url));
const repoDir = fileURLToPath(new URL('..', import.meta.url));
const resultsDir = join(benchDir, 'results');

/** Profile directories of the servers run under --cpu-prof, with the window of the profiled case. */
export const profiles: { dir: string; window: string }[] = [];

/** With `profileWindow`, the child runs under --cpu-prof and that measured window is summarised at the end. */
export async function launchChild(spec: TargetSpec, label: string, profileWindow: string | null): Promise<RunningTarget> {
  const execArgv = ['--import', 'tsx', ...(process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean)];
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.BENCH_PROFILE_WINDOWS_FILE;
  if (profileWindow) {
    // One directory per server: tsx's module loader runs in a worker thread, which
    // writes a profile of its own (Node's default file names tell the threads apart).
    const dir = join(resultsDir, 'profiles', `${label}-${new Date().toISOString().replace(/[:.]/g, '-')}`);
    mkdirSync(dir, { recursive: true });
    execArgv.push('--cpu-prof', `--cpu-prof-dir=${dir}`);
    env.BENCH_PROFILE_WINDOWS_FILE = join(dir, 'windows.json');
    profiles.push({ dir, window: profileWindow });
    console.log(`(CPU profile of the ${label} server: ${dir})`);
  }
  const child: ChildProcess = fork(join(benchDir, 'child.ts'), [], {
    cwd: repoDir,
    execArgv,
    env,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let nextId = 1;
  const pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.on('message', (message: Reply) => {
    const waiter = pending.get(message.id);
    if (!waiter) return;
    pending.delete(message.id);
    if (message.ok) waiter.resolve(message.result);
    else waiter.reject(new Error(`server child: ${message.error}`));
  });
  child.once('exit', (code, signal) => {
    for (const waiter of pending.values()) waiter.reject(new Error(`server child exited (code ${code}, signal ${signal})`));
    pending.clear();
  });
  const call = <T>(request: { op: 'start'; spec: TargetSpec } | { op: 'usageStart'; window: string } | { op: Op }): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      child.send({ ...request, id } as Request);
    });

  try {
    const info = await call<TargetInfo>({ op: 'start', spec });
    return {
      info,
      usageStart: (window) => call<void>({ op: 'usageStart', window }),
      usageStop: () => call<ServerUsage>({ op: 'usageStop' }),
      check: () => call<TargetCheck>({ op: 'check' }),
      stop: async () => {
        try {
          await call<void>({ op: 'stop' });
        } finally {
          if (child.connected) child.disconnect();
          await exited;
        }
      },
    };
  } catch (error) {
    if (child.connected) child.disconnect();
    child.kill();
    await exited;
    throw error;
  }
}

