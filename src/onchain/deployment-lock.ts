/**
 * One writer of the deployment file at a time. `writeChainDeployment` reads the file, replaces one
 * chain and writes it back: two deploys (of two chains) or a deploy and a signer change running at
 * once would each write back a file without the other's change. A lock file beside it
 * (`<file>.lock`, created exclusively) makes the read-modify-write whole, across processes.
 */
import { mkdir, open, stat, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { OnchainAdminError } from './chain-connection.js';

/** A lock older than this was left by a process that died holding it. */
const STALE_MS = 60_000;
const WAIT_MS = 30_000;

export async function withDeploymentFileLock<T>(path: string, work: () => Promise<T>): Promise<T> {
  const lock = `${path}.lock`;
  await mkdir(dirname(path), { recursive: true });
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    try {
      await (await open(lock, 'wx')).close();
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const age = await stat(lock).then((s) => Date.now() - s.mtimeMs, () => 0);
      if (age > STALE_MS) await unlink(lock).catch(() => undefined);
      else if (Date.now() > deadline) throw new OnchainAdminError(`${lock} is held by another command; remove it if none is running`);
      else await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  try {
    return await work();
  } finally {
    await unlink(lock).catch(() => undefined);
  }
}
