/**
 * For tests and tools that run `stampgate` as real OS processes (test/cli/shutdown.test.ts,
 * test/cluster/cluster.test.ts, loadtest/run.ts).
 */
import { type ChildProcess, spawn as spawnChild } from 'node:child_process';
import { readdirSync, symlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoDir = fileURLToPath(new URL('../..', import.meta.url));

/**
 * src/ transpiled by esbuild into `<root>/dist`, beside links to node_modules, assets, contracts and
 * package.json (the layout dist/ has): no type-check and no tsx loader in the processes, and the
 * shared dist/ is left alone. Returns the path of the CLI entry point.
 */
export async function buildCli(root: string): Promise<string> {
  const { build } = await import('esbuild');
  const srcDir = join(repoDir, 'src');
  const entryPoints = readdirSync(srcDir, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))
    .map((file) => join(srcDir, file));
  await build({ entryPoints, outdir: join(root, 'dist'), outbase: srcDir, format: 'esm', platform: 'node', target: 'node20', sourcemap: 'linked', logLevel: 'error' });
  for (const name of ['node_modules', 'assets', 'contracts', 'package.json']) symlinkSync(join(repoDir, name), join(root, name));
  return join(root, 'dist', 'cli', 'main.js');
}

/** A TCP port free on 127.0.0.1 right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** `promise`, or a rejection naming `what` after `ms`. */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: no result within ${ms} ms`)), ms);
    }),
  ]);
}

/** A `stampgate` OS process with its output kept as lines, for tests that start several. */
export class RunningCli {
  readonly lines: string[] = [];
  exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly child: ChildProcess;
  #partial = '';

  constructor(
    readonly label: string,
    cliPath: string,
    args: string[],
    env: NodeJS.ProcessEnv,
    cwd: string,
  ) {
    this.child = spawnChild(process.execPath, [cliPath, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    for (const stream of [this.child.stdout, this.child.stderr]) {
      stream?.setEncoding('utf8');
      stream?.on('data', (chunk: string) => {
        const parts = (this.#partial + chunk).split('\n');
        this.#partial = parts.pop() ?? '';
        this.lines.push(...parts);
      });
    }
    this.exited = new Promise((resolve) =>
      this.child.once('exit', (code, signal) => {
        this.exit = { code, signal };
        resolve(this.exit);
      }),
    );
  }

  /** Parsed JSON log lines (pino), skipping plain output. */
  entries(): { level: number; msg: string; [field: string]: unknown }[] {
    return this.lines.filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as { level: number; msg: string });
  }

  tail(count = 20): string {
    return [`--- ${this.label} output tail`, ...this.lines.slice(-count), this.#partial].join('\n');
  }

  async stop(signal: NodeJS.Signals = 'SIGTERM', ms = 20_000) {
    if (!this.exit) this.child.kill(signal);
    return withTimeout(this.exited, ms, `${this.label} exit after ${signal}`);
  }
}

/** The environment of a child process: this one's without any Stampgate setting, plus `settings`. */
export function cliEnvironment(settingNames: string[], settings: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of settingNames) delete env[name];
  delete env.NODE_OPTIONS;
  return { ...env, ...settings };
}

/** Polls `probe` until it returns true; fails naming `what` after `timeoutMs`. */
export async function waitFor(what: string, timeoutMs: number, probe: () => boolean | Promise<boolean>, everyMs = 50): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  at: number;
}

/**
 * A child process with its stdout split into lines as they arrive (a `stampgate` server, worker or
 * CLI command of a test or of the load test), its exit, and a wait for a line.
 */
export class LoggedProcess {
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
