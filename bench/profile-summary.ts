/**
 * Summarises a V8 CPU profile of a benchmark server child
 * (`BENCH_CPU_PROF=1 npm run bench` writes them to bench/results/profiles/).
 *
 *   npx tsx bench/profile-summary.ts <profile directory> [window-name] [--top N] [--focus text]
 *
 * The directory is one server's (bench/results/profiles/<server>-<time>/); its
 * main-thread profile is read (thread id 0 in Node's file name). With a window
 * name (ceiling, score-sqlite, submit-sqlite, score-postgres, submit-postgres)
 * only the samples of that measured window count (from windows.json beside it).
 * Prints self time by function, inclusive time by function, and self time by
 * module (package under node_modules, or file of this repository).
 * `--focus text` keeps only samples whose stack has a frame whose name or file contains text.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { ProfileWindow } from './protocol.js';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

function usage(): never {
  console.error('usage: npx tsx bench/profile-summary.ts <profile directory> [window-name] [--top N] [--focus text]');
  process.exit(2);
}

const args = process.argv.slice(2);
let top = 25;
let focus: string | null = null;
const positional: string[] = [];
for (let i = 0; i < args.length; i++) {
  const arg = args[i] as string;
  if (arg === '--top') top = Number(args[++i]);
  else if (arg === '--focus') focus = args[++i] ?? null;
  else positional.push(arg);
}
const [target, windowName] = positional;
if (!target) usage();

/** Node names profiles CPU.<date>.<time>.<pid>.<thread id>.<seq>.cpuprofile; the main thread is 0. */
function mainThreadProfile(dir: string): string {
  const files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
  const main = files.find((f) => f.split('.')[4] === '0') ?? files[0];
  if (!main) throw new Error(`no .cpuprofile in ${dir}`);
  return join(dir, main);
}

const isDir = statSync(target).isDirectory();
const file = isDir ? mainThreadProfile(target) : target;
const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
let window: ProfileWindow | null = null;
if (windowName) {
  const windowsFile = isDir ? join(target, 'windows.json') : file.replace(/[^/]*$/, 'windows.json');
  if (!existsSync(windowsFile)) throw new Error(`${windowsFile} not found`);
  const windows = JSON.parse(readFileSync(windowsFile, 'utf8')) as ProfileWindow[];
  window = windows.find((w) => w.name === windowName) ?? null;
  if (!window) throw new Error(`no window ${windowName}; have ${windows.map((w) => w.name).join(', ')}`);
}

const byId = new Map<number, ProfileNode>();
const parent = new Map<number, number>();
for (const node of profile.nodes) {
  byId.set(node.id, node);
  for (const child of node.children ?? []) parent.set(child, node.id);
}

function shortUrl(url: string): string {
  if (url === '') return '';
  const path = url.replace(/^file:\/\//, '');
  const nm = path.lastIndexOf('/node_modules/');
  if (nm >= 0) return path.slice(nm + '/node_modules/'.length);
  const repo = path.indexOf('/src/') >= 0 ? path.slice(path.indexOf('/src/') + 1) : path.indexOf('/bench/') >= 0 ? path.slice(path.indexOf('/bench/') + 1) : path;
  return repo;
}

function moduleOf(frame: CallFrame): string {
  const url = shortUrl(frame.url);
  if (url === '') return frame.functionName.startsWith('(') ? frame.functionName : '(native)';
  if (url.startsWith('node:')) return 'node:internal';
  if (frame.url.includes('/node_modules/')) {
    const parts = url.split('/');
    return parts[0]?.startsWith('@') ? `${parts[0]}/${parts[1]}` : (parts[0] as string);
  }
  return url;
}

function frameKey(frame: CallFrame): string {
  const url = shortUrl(frame.url);
  return `${frame.functionName || '(anonymous)'} ${url ? `${url}:${frame.lineNumber + 1}` : ''}`.trim();
}

const self = new Map<string, number>();
const inclusive = new Map<string, number>();
const modules = new Map<string, number>();
let total = 0;
let idle = 0;
let time = profile.startTime;
for (let i = 0; i < profile.samples.length; i++) {
  time += profile.timeDeltas[i] ?? 0;
  const delta = profile.timeDeltas[i + 1] ?? 0;
  if (window && (time < window.startUs || time > window.endUs)) continue;
  const leaf = byId.get(profile.samples[i] as number);
  if (!leaf) continue;
  const stack: CallFrame[] = [];
  for (let id: number | undefined = leaf.id; id !== undefined; id = parent.get(id)) {
    const node = byId.get(id);
    if (node) stack.push(node.callFrame);
  }
  if (focus && !stack.some((f) => f.functionName.includes(focus as string) || f.url.includes(focus as string))) continue;
  if (leaf.callFrame.functionName === '(idle)') {
    idle += delta;
    continue;
  }
  total += delta;
  const key = frameKey(leaf.callFrame);
  self.set(key, (self.get(key) ?? 0) + delta);
  const mod = moduleOf(leaf.callFrame);
  modules.set(mod, (modules.get(mod) ?? 0) + delta);
  const seen = new Set<string>();
  for (const frame of stack) {
    const k = frameKey(frame);
    if (seen.has(k)) continue;
    seen.add(k);
    inclusive.set(k, (inclusive.get(k) ?? 0) + delta);
  }
}

function print(title: string, map: Map<string, number>): void {
  console.log(`\n${title}`);
  const rows = [...map.entries()].sort((a, b) => b[1] - a[1]).slice(0, top);
  for (const [key, us] of rows) {
    console.log(`${(us / 1000).toFixed(0).padStart(8)} ms ${((us / total) * 100).toFixed(1).padStart(5)}%  ${key}`);
  }
}

const span = window ? window.endUs - window.startUs : profile.endTime - profile.startTime;
console.log(
  `${file}${window ? ` window ${window.name}` : ''}${focus ? ` focus ${focus}` : ''}: ` +
    `${(span / 1000).toFixed(0)} ms wall, ${(total / 1000).toFixed(0)} ms busy, ${(idle / 1000).toFixed(0)} ms idle`,
);
print('Self time by module', modules);
print('Self time by function', self);
print('Inclusive time by function', inclusive);
