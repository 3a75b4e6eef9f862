import { main } from '../../src/cli/main.js';

export interface CliRun {
  code: number;
  out: string;
  err: string;
  json<T = any>(): T;
}

/** Runs the `stampgate` command in-process with its own environment and captured output. */
export async function runCli(args: string[], env: Record<string, string>): Promise<CliRun> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (l) => out.push(l), err: (l) => err.push(l), env });
  const stdout = out.join('\n');
  return { code, out: stdout, err: err.join('\n'), json: () => JSON.parse(stdout) };
}
