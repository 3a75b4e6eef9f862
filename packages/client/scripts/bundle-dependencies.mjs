/**
 * Copies the client's runtime dependencies, and theirs, into this package's own node_modules, so
 * that `npm pack` puts them in the tarball (bundleDependencies): a project then installs the client
 * from the tarball alone, with no registry. In the repository's workspace they are hoisted to the
 * root node_modules, where npm pack does not look. `clean` removes the copies again (postpack).
 * `--into DIR` copies into DIR/node_modules instead (a staged copy of the package, packed there).
 */
import { cpSync, existsSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const packageDir = fileURLToPath(new URL('..', import.meta.url));
const into = process.argv.indexOf('--into');
const target = join(into > 0 ? process.argv[into + 1] : packageDir, 'node_modules');

/** The folder of package `name` as Node would find it from `fromDir`. */
function packageFolder(name, fromDir) {
  for (let dir = fromDir; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    if (dirname(dir) === dir) throw new Error(`${name} is not installed (run npm ci at the repository root)`);
  }
}

const manifestOf = (dir) => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));

if (process.argv[2] === 'clean') {
  rmSync(target, { recursive: true, force: true });
} else {
  rmSync(target, { recursive: true, force: true });
  const copied = new Set();
  const copy = (name, fromDir) => {
    if (copied.has(name)) return;
    copied.add(name);
    const source = packageFolder(name, fromDir);
    cpSync(source, join(target, name), { recursive: true, dereference: true, filter: (path) => !path.slice(source.length).includes('/node_modules/') });
    for (const dependency of Object.keys(manifestOf(source).dependencies ?? {})) copy(dependency, source);
  };
  for (const name of manifestOf(packageDir).bundleDependencies ?? []) copy(name, packageDir);
  console.log(`bundled into node_modules: ${[...copied].join(', ')}`);
}
