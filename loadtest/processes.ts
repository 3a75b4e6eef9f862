/**
 * The `stampgate` child processes of a load test: starting them (servers and one-shot CLI
 * commands), waiting on them, stopping them. Every process started here is remembered so that a
 * failed or interrupted run can kill what is left.
 */
import { spawn } from 'node:child_process';
import { describeSettings } from '../src/config/index.js';
import { LoggedProcess } from '../test/helpers/processes.js';
import { repoDir } from './definitions.js';

export type { Exit } from '../test/helpers/processes.js';

/** A `stampgate` process of the load test. */
export class Proc extends LoggedProcess {
  /** Log lines at error level or above. */
  errorLines(): string[] {
    return this.linesAtLeast(50);
  }

  /** Log lines at pino `level` or above (40: warnings). */
  linesAtLeast(level: number): string[] {
    return this.lines.filter((line) => line.startsWith('{') && (JSON.parse(line) as { level?: number }).level! >= level);
  }
}


let cliPath = '';
const running: Proc[] = [];

/** The built CLI every later process runs (built once per load test). */
export function useCli(path: string): void {
  cliPath = path;
}

/** Last resort on failure or Ctrl-C: nothing started here may outlive the load test. */
export function killAllRunning(): void {
  for (const proc of running) if (!proc.exit) proc.child.kill('SIGKILL');
}

export function baseEnv(settingsForRun: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.NODE_OPTIONS;
  const controlled = new Set(['STAMPGATE_ENV', 'DATA_DIR', 'DATABASE_URL', 'REDIS_URL', 'HOST', 'PORT', 'RATE_LIMIT_TIER4']);
  for (const { name } of describeSettings()) if (controlled.has(name)) delete env[name];
  return { LOG_LEVEL: 'warn', ...env, ...settingsForRun };
}

export function startProc(label: string, args: string[], env: NodeJS.ProcessEnv, profileDir: string | null): Proc {
  const nodeArgs = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
  const proc = new Proc(label, spawn(process.execPath, [...nodeArgs, cliPath, ...args], { cwd: repoDir, env, stdio: ['ignore', 'pipe', 'pipe'] }));
  running.push(proc);
  return proc;
}

export async function cli(args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  const proc = startProc(`stampgate ${args[0]}`, args, env, null);
  const exit = await proc.exited;
  await new Promise((r) => setImmediate(r));
  if (exit.code !== 0) throw new Error(`stampgate ${args.join(' ')} failed ${JSON.stringify(exit)}\n${proc.tail()}`);
  return proc.lines.join('\n');
}


export async function waitUntil(what: string, timeoutMs: number, probe: () => Promise<boolean> | boolean, everyMs = 100): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

export async function stopAll(procs: Proc[]): Promise<{ label: string; code: number | null; signal: string | null }[]> {
  for (const proc of procs) if (!proc.exit) proc.child.kill('SIGTERM');
  return Promise.all(
    procs.map(async (proc) => {
      const exit = await Promise.race([proc.exited, new Promise<null>((r) => setTimeout(() => r(null), 20_000))]);
      if (!exit) proc.child.kill('SIGKILL');
      return { label: proc.label, code: exit?.code ?? null, signal: exit?.signal ?? 'SIGKILL (no exit within 20 s)' };
    }),
  );
}
