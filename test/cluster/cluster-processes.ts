/**
 * The cluster test's `stampgate` processes (servers, workers, one-shot CLI commands) with their
 * output split into lines, and plain HTTP requests to them. Every process started here is kept in
 * `spawned` so that none outlives the test.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { describeSettings } from '../../src/config/index.js';
import { repoDir } from './cluster-environment.js';

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  at: number;
}

/** A running `stampgate` process with its stdout split into lines. */
export class StampgateProcess {
  readonly lines: string[] = [];
  readonly stderr: string[] = [];
  lastOutputAt = Date.now();
  exit: Exit | null = null;
  /** When the process ended (its 'exit' event). */
  readonly exited: Promise<Exit>;
  /** When its output streams are drained too (every log line read). */
  readonly closed: Promise<void>;
  #partial = '';
  readonly #wake = new Set<() => void>();

  constructor(
    readonly label: string,
    readonly child: ChildProcess,
  ) {
    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', (chunk: string) => {
      const parts = (this.#partial + chunk).split('\n');
      this.#partial = parts.pop() ?? '';
      this.lines.push(...parts);
      this.lastOutputAt = Date.now();
      for (const wake of this.#wake) wake();
    });
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => this.stderr.push(chunk));
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.exit = { code, signal, at: Date.now() };
        for (const wake of this.#wake) wake();
        resolve(this.exit);
      });
    });
    this.closed = new Promise((resolve) => {
      child.once('close', () => {
        if (this.#partial !== '') this.lines.push(this.#partial);
        this.#partial = '';
        resolve();
      });
    });
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  /** The first stdout line that matches; fails when the process ends first or time runs out. */
  waitForLine(match: (line: string) => boolean, timeoutMs: number): Promise<string> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => done(new Error(`${this.label}: no matching line within ${timeoutMs} ms\n${this.tail()}`)), timeoutMs);
      const check = () => {
        const line = this.lines.find(match);
        if (line !== undefined) done(null, line);
        else if (this.exit) done(new Error(`${this.label} exited (${JSON.stringify(this.exit)}) before the expected line\n${this.tail()}`));
      };
      const done = (error: Error | null, line?: string) => {
        clearTimeout(timer);
        this.#wake.delete(check);
        if (error) reject(error);
        else resolve(line as string);
      };
      this.#wake.add(check);
      check();
    });
  }

  tail(lines = 15): string {
    return [
      `--- ${this.label} (pid ${this.pid}) stdout tail`,
      ...this.lines.slice(-lines),
      `--- ${this.label} stderr`,
      this.stderr.join('').slice(-3000),
    ].join('\n');
  }
}

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
