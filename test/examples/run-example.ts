import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** An example script run as an integrator would (`tsx examples/<name>.ts`), its output kept as lines. */
export class RunningExample {
  readonly stdout: string[] = [];
  readonly stderr: string[] = [];
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  #waiters: { pattern: RegExp; resolve: (match: RegExpMatchArray) => void }[] = [];

  /** `name` is an example's name, or the absolute path of a script. */
  constructor(name: string, env: Record<string, string>, args: string[] = []) {
    // Only what the example documents, plus PATH: nothing of the test process leaks into it.
    this.child = spawn(process.execPath, ['--import', 'tsx', name.startsWith('/') ? name : `examples/${name}.ts`, ...args], {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.#collect(this.child.stdout!, this.stdout);
    this.#collect(this.child.stderr!, this.stderr);
    this.exited = new Promise((resolve) => this.child.once('exit', (code) => resolve(code)));
  }

  #collect(stream: NodeJS.ReadableStream, lines: string[]) {
    let partial = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      const parts = (partial + chunk).split('\n');
      partial = parts.pop() ?? '';
      for (const line of parts) {
        lines.push(line);
        for (const waiter of [...this.#waiters]) {
          const match = line.match(waiter.pattern);
          if (match) {
            this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
            waiter.resolve(match);
          }
        }
      }
    });
  }

  /** The first stdout line (already printed or to come) matching `pattern`; fails if the process ends first. */
  line(pattern: RegExp): Promise<RegExpMatchArray> {
    for (const line of this.stdout) {
      const match = line.match(pattern);
      if (match) return Promise.resolve(match);
    }
    return new Promise((resolve, reject) => {
      this.#waiters.push({ pattern, resolve });
      void this.exited.then((code) =>
        reject(new Error(`example exited (${code}) before printing ${pattern}:\n${[...this.stdout, ...this.stderr].join('\n')}`)),
      );
    });
  }

  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGTERM');
    await this.exited;
  }
}
