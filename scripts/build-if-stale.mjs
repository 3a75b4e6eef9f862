// `npm start`'s prestart: runs `npm run build` only when dist/ is missing or older than what it is
// built from, so that a start right after `npm install` (whose prepare script built everything)
// does not build it all again. Plain JavaScript: it runs before anything is compiled.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** What `npm run build` reads (tsc: src and the tsconfigs; vite: portal and the locked dependencies). */
const inputs = ['src', 'portal', 'tsconfig.json', 'tsconfig.build.json', 'package-lock.json'];
/** One file of each build step; both steps rewrite every output, so each stands for its step. */
const outputs = ['dist/cli/main.js', 'dist/portal-ui/index.html'];

function newestMtime(path) {
  let stat;
  try {
    stat = statSync(path);
  } catch {
    return 0;
  }
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs; // a deleted or renamed file shows only in its folder's time
  for (const entry of readdirSync(path)) {
    if (entry === 'node_modules') continue;
    newest = Math.max(newest, newestMtime(join(path, entry)));
  }
  return newest;
}

/** Why dist/ under `root` needs a build, or null when it is current. */
export function staleReason(root) {
  let oldestOutput = Infinity;
  for (const output of outputs) {
    try {
      oldestOutput = Math.min(oldestOutput, statSync(join(root, output)).mtimeMs);
    } catch {
      return `${output} is missing`;
    }
  }
  for (const input of inputs) {
    if (newestMtime(join(root, input)) > oldestOutput) return `${input} changed since the last build`;
  }
  return null;
}

const root = process.cwd();
const reason = staleReason(root);
if (reason === null) {
  console.log('dist/ is up to date with its sources: not rebuilding.');
} else {
  console.log(`Building (${reason}).`);
  // The npm that runs this script, not whichever npm is first on the PATH.
  const npm = process.env.npm_execpath;
  const result = npm
    ? spawnSync(process.execPath, [npm, 'run', 'build'], { cwd: root, stdio: 'inherit' })
    : spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit', shell: process.platform === 'win32' });
  process.exitCode = result.status ?? 1;
}
