/**
 * Summarises a V8 CPU profile of a benchmark server child
 * (`npm run bench -- --case NAME --profile` writes them to bench/results/profiles/
 * and prints this summary of the measured window itself).
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
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
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

/** Node names profiles CPU.<date>.<time>.<pid>.<thread id>.<seq>.cpuprofile; the main thread is 0. */
function mainThreadProfile(dir: string): string {
  const files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
  const main = files.find((f) => f.split('.')[4] === '0') ?? files[0];
  if (!main) throw new Error(`no .cpuprofile in ${dir}`);
  return join(dir, main);
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

export interface ProfileSummary {
  file: string;
  window: ProfileWindow | null;
  focus: string | null;
  /** Wall time covered (the window, or the whole profile), µs. */
  spanUs: number;
  busyUs: number;
  idleUs: number;
  /** Sorted, largest first: [key, µs]. */
  selfByModule: [string, number][];
  selfByFunction: [string, number][];
  inclusiveByFunction: [string, number][];
}

/**
 * Self and inclusive time of a profile (a .cpuprofile file, or a bench profile directory whose
 * main-thread profile is read), optionally limited to a measured window (from windows.json
 * beside it) and to samples whose stack has a frame whose name or file contains `focus`.
 */
export function summariseProfile(target: string, options: { window?: string | null; focus?: string | null } = {}): ProfileSummary {
  const focus = options.focus ?? null;
  const isDir = statSync(target).isDirectory();
  const file = isDir ? mainThreadProfile(target) : target;
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  let window: ProfileWindow | null = null;
  if (options.window) {
    const windowsFile = isDir ? join(target, 'windows.json') : file.replace(/[^/]*$/, 'windows.json');
    if (!existsSync(windowsFile)) throw new Error(`${windowsFile} not found`);
    const windows = JSON.parse(readFileSync(windowsFile, 'utf8')) as ProfileWindow[];
    window = windows.find((w) => w.name === options.window) ?? null;
    if (!window) throw new Error(`no window ${options.window}; have ${windows.map((w) => w.name).join(', ')}`);
  }

  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const node of profile.nodes) {
    byId.set(node.id, node);
    for (const child of node.children ?? []) parent.set(child, node.id);
  }

  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const modules = new Map<string, number>();
  let busy = 0;
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
    if (focus && !stack.some((f) => f.functionName.includes(focus) || f.url.includes(focus))) continue;
    if (leaf.callFrame.functionName === '(idle)') {
      idle += delta;
      continue;
    }
    busy += delta;
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

  const sorted = (map: Map<string, number>) => [...map.entries()].sort((a, b) => b[1] - a[1]);
  return {
    file,
    window,
    focus,
    spanUs: window ? window.endUs - window.startUs : profile.endTime - profile.startTime,
    busyUs: busy,
    idleUs: idle,
    selfByModule: sorted(modules),
    selfByFunction: sorted(self),
    inclusiveByFunction: sorted(inclusive),
  };
}

export function summaryHeader(summary: ProfileSummary): string {
  const { file, window, focus } = summary;
  return (
    `${file}${window ? ` window ${window.name}` : ''}${focus ? ` focus ${focus}` : ''}: ` +
    `${(summary.spanUs / 1000).toFixed(0)} ms wall, ${(summary.busyUs / 1000).toFixed(0)} ms busy, ${(summary.idleUs / 1000).toFixed(0)} ms idle`
  );
}

/** Lines of one ranking: ms, share of the busy time, function or module. */
export function rankingLines(summary: ProfileSummary, rows: [string, number][], top: number): string[] {
  return rows.slice(0, top).map(([key, us]) => `${(us / 1000).toFixed(0).padStart(8)} ms ${((us / summary.busyUs) * 100).toFixed(1).padStart(5)}%  ${key}`);
}

/** What `npm run bench -- --profile` prints: the profiled case's hottest code over its measured seconds. */
export function benchProfileText(dir: string, window: string, top: number): string {
  try {
    const summary = summariseProfile(dir, { window });
    return [
      `CPU profile, ${summaryHeader(summary)}`,
      'Self time by module',
      ...rankingLines(summary, summary.selfByModule, 8),
      `Top ${top} functions by self time`,
      ...rankingLines(summary, summary.selfByFunction, top),
      `(more: npx tsx bench/profile-summary.ts ${dir} ${window} --top 50 [--focus text])`,
    ].join('\n');
  } catch (error) {
    return `CPU profile in ${dir} could not be summarised: ${error instanceof Error ? error.message : String(error)}`;
  }
}

function main(args: string[]): void {
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
  if (!target) {
    console.error('usage: npx tsx bench/profile-summary.ts <profile directory> [window-name] [--top N] [--focus text]');
    process.exit(2);
  }
  const summary = summariseProfile(target, { window: windowName ?? null, focus });
  console.log(summaryHeader(summary));
  for (const [title, rows] of [
    ['Self time by module', summary.selfByModule],
    ['Self time by function', summary.selfByFunction],
    ['Inclusive time by function', summary.inclusiveByFunction],
  ] as const) {
    console.log(`\n${title}`);
    for (const line of rankingLines(summary, rows, top)) console.log(line);
  }
}

// Run as a script (not when bench/run.ts imports it).
if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main(process.argv.slice(2));
