/**
 * For tests and tools that run `stampgate` as real OS processes (test/cli/shutdown.test.ts,
 * test/cluster/cluster.test.ts, loadtest/run.ts).
 */
import { readdirSync, symlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoDir = fileURLToPath(new URL('../..', import.meta.url));

/**
 * src/ transpiled by esbuild into `<root>/dist`, beside links to node_modules, assets and
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
  for (const name of ['node_modules', 'assets', 'package.json']) symlinkSync(join(repoDir, name), join(root, name));
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
