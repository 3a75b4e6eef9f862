import { randomBytes } from 'node:crypto';
import { link, mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** How one kind of key is made and read back from its file. */
export interface KeyFileKind<K> {
  generate: () => string;
  /** Reads the file's contents; throws (naming `path`) when they are not such a key. */
  parse: (contents: string, path: string) => K;
}

/**
 * A development key kept in `<dir>/<fileName>` (mode 0600), created on first use: the development
 * issuer's key, the webhook master key, the portal's test wallet. Written aside and then hard-linked
 * into place, so that a concurrent first start never reads a half-written file and exactly one of
 * the generated keys wins.
 */
export async function loadOrCreateKeyFile<K>(dir: string, fileName: string, kind: KeyFileKind<K>): Promise<K> {
  const path = join(dir, fileName);
  try {
    return kind.parse(await readFile(path, 'utf8'), path);
  } catch (error) {
    if (!hasErrorCode(error, 'ENOENT')) throw error;
  }
  await mkdir(dir, { recursive: true });
  const key = kind.generate();
  const pendingPath = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(pendingPath, `${key}\n`, { mode: 0o600, flag: 'wx' });
  try {
    await link(pendingPath, path);
    return kind.parse(key, path);
  } catch (error) {
    if (!hasErrorCode(error, 'EEXIST')) throw error;
    return kind.parse(await readFile(path, 'utf8'), path);
  } finally {
    await unlink(pendingPath);
  }
}

function hasErrorCode(error: unknown, code: string): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === code;
}
