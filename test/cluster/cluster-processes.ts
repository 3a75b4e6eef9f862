/**
 * The cluster test's `stampgate` processes (servers, workers, one-shot CLI commands) with their
 * output split into lines, and plain HTTP requests to them. Every process started here is kept in
 * `spawned` so that none outlives the test.
 */
import { spawn } from 'node:child_process';
import { describeSettings } from '../../src/config/index.js';
import { LoggedProcess } from '../helpers/processes.js';
import { repoDir } from './cluster-environment.js';

export type { Exit } from '../helpers/processes.js';

/** A running `stampgate` process of the cluster. */
export class StampgateProcess extends LoggedProcess {}

let cliPath = '';
/** Every process the test started, so that none outlives it. */
export const spawned: StampgateProcess[] = [];

/** The CLI built by buildCli, which every later process runs. */
export function useCli(path: string): void {
  cliPath = path;
}

export function runStampgate(label: string, args: string[], env: NodeJS.ProcessEnv): StampgateProcess {
  if (!cliPath) throw new Error('buildCli first');
  const child = spawn(process.execPath, [cliPath, ...args], { cwd: repoDir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const proc = new StampgateProcess(label, child);
  spawned.push(proc);
  return proc;
}

/** The lease owner a `worker` process announces when it starts. */
export async function workerOwner(proc: StampgateProcess): Promise<string> {
  const line = await proc.waitForLine((l) => l.startsWith('Scoring worker '), 120_000);
  return (/^Scoring worker (\S+) started\.$/.exec(line) ?? [])[1] as string;
}

/** A one-shot CLI command; fails the test unless it exits 0. Returns its stdout. */
export async function cli(args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  const proc = runStampgate(`stampgate ${args.slice(0, 2).join(' ')}`, args, env);
  const exit = await proc.exited;
  await proc.closed;
  if (exit.code !== 0) throw new Error(`stampgate ${args.join(' ')} exited ${JSON.stringify(exit)}\n${proc.tail()}`);
  return proc.lines.join('\n');
}

export function cliJson<T>(args: string[], env: NodeJS.ProcessEnv): Promise<T> {
  return cli([...args, '--json'], env).then((out) => JSON.parse(out) as T);
}

/** The environment every process gets: the runner's, minus any Stampgate setting it happens to carry. */
export function childEnv(settings: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const { name } of describeSettings()) delete env[name];
  delete env.NODE_OPTIONS;
  return { ...env, ...settings };
}

export async function waitUntil<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined> | T | undefined, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

export interface HttpResult {
  status: number;
  headers: Headers;
  body: any;
}

export async function request(port: number, method: 'GET' | 'POST', path: string, key: string, body?: unknown): Promise<HttpResult> {
  const response = await fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // keep the text
  }
  return { status: response.status, headers: response.headers, body: parsed };
}
