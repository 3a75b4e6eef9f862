/**
 * Paired comparison: the server CPU per request of two servers (two checkouts, or one checkout
 * with two environments) loaded at the same fixed rate at the same time, for changes smaller than
 * this machine's run-to-run noise. Both server children share one core (the same conditions for
 * each) and the load generator has the other; every pair of processes is fresh, because one
 * process's JIT decisions can move its figure by up to 10 % for its whole life.
 *
 *   npm run bench:paired -- --b ../other-checkout [--a .] [--b-env NAME=VALUE,...] [--b-node-flags='--flag ...'] (with =: the value starts with --)
 *                           [--case score|bounties]
 *                           [--rate 5000] [--pairs 4] [--rounds 3] [--seconds 5]
 *
 * Prints B/A per round and their median and geometric mean: 0.90 means B costs 10 % less CPU per
 * request than A. SQLite only; a diagnostic (no verdicts). Needs `taskset` (util-linux).
 */
import { type ChildProcess, execFileSync, fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { bountiesLoad } from './bounties-seed.js';
import { choosePoolProviders, serverEnv, writeCredentials } from './fixtures.js';
import type { Reply, ServerUsage, TargetInfo, TargetSpec } from './protocol.js';

const { values: options } = parseArgs({
  options: {
    a: { type: 'string', default: '.' },
    b: { type: 'string', default: '.' },
    'a-env': { type: 'string', default: '' },
    'b-env': { type: 'string', default: '' },
    'a-node-flags': { type: 'string', default: '' },
    'b-node-flags': { type: 'string', default: '' },
    case: { type: 'string', default: 'score' },
    rate: { type: 'string', default: '5000' },
    pairs: { type: 'string', default: '4' },
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '5' },
  },
});
const kase = options.case;
if (kase !== 'score' && kase !== 'bounties') throw new Error('--case is score or bounties');
const rate = Number(options.rate);
const seconds = Number(options.seconds);

function envOf(list: string): Record<string, string> {
  return Object.fromEntries(
    list
      .split(',')
      .filter(Boolean)
      .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
  );
}

interface Server {
  child: ChildProcess;
  call<T>(request: object): Promise<T>;
}

function launch(dir: string, env: Record<string, string>, nodeFlags: string): Server {
  const root = resolve(dir);
  const execArgv = ['--import', 'tsx', ...nodeFlags.split(' ').filter(Boolean)];
  const child = fork(join(root, 'bench/child.ts'), [], { cwd: root, execArgv, env: { ...process.env, ...env }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  let nextId = 1;
  const pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  child.on('message', (message: Reply) => {
    const waiter = pending.get(message.id);
    pending.delete(message.id);
    if (message.ok) waiter?.resolve(message.result);
    else waiter?.reject(new Error(message.error));
  });
  child.once('exit', (code, signal) => {
    for (const waiter of pending.values()) waiter.reject(new Error(`server child in ${root} exited (code ${code}, signal ${signal})`));
    pending.clear();
  });
  const call = <T>(request: object) =>
    new Promise<T>((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      child.send({ ...request, id }, (error) => {
        if (error) reject(error);
      });
    });
  return { child, call };
}

function load(info: TargetInfo, secs: number) {
  let n = 0;
  const bounties = kase === 'bounties' ? bountiesLoad() : null;
  const addresses = info.addresses ?? [];
  const path = bounties ? bounties.path : (k: number) => `/registry/score/${info.scorerId}/${addresses[k % addresses.length]}`;
  const headers = bounties ? bounties.headers : { 'x-api-key': info.apiKey ?? '' };
  return autocannon({
    url: `http://127.0.0.1:${info.port}`,
    connections: 5,
    duration: secs,
    overallRate: rate,
    requests: [
      {
        method: 'GET',
        headers,
        setupRequest: (request) => {
          request.path = path(n++);
          return request;
        },
      },
    ],
  });
}

const cpuPerRequest = (usage: ServerUsage, requests: number) => ((usage.cpuUserMs + usage.cpuSystemMs) * 1000) / requests;

const tmp = mkdtempSync(join(tmpdir(), 'stampgate-paired-'));
try {
  const pool = choosePoolProviders();
  const credentialsFile = join(tmp, 'credentials.json');
  await writeCredentials(join(tmp, 'data'), credentialsFile, pool.providers, 200);
  const spec = (file: string): TargetSpec => ({
    kind: 'stampgate',
    database: 'sqlite',
    env: serverEnv(join(tmp, 'data'), `sqlite:${join(tmp, file)}`),
    credentialsFile,
    expectedScore: pool.expectedScore,
    expectedRawScore: pool.expectedRawScore,
    bounties: kase === 'bounties' ? 10_000 : 0,
  });
  const ratios: number[] = [];
  for (let pair = 1; pair <= Number(options.pairs); pair++) {
    const a = launch(options.a, envOf(options['a-env']), options['a-node-flags']);
    const b = launch(options.b, envOf(options['b-env']), options['b-node-flags']);
    execFileSync('taskset', ['-acp', '1', String(a.child.pid)]);
    execFileSync('taskset', ['-acp', '1', String(b.child.pid)]);
    execFileSync('taskset', ['-acp', '0', String(process.pid)]);
    try {
      const [infoA, infoB] = await Promise.all([a.call<TargetInfo>({ op: 'start', spec: spec(`a${pair}.sqlite`) }), b.call<TargetInfo>({ op: 'start', spec: spec(`b${pair}.sqlite`) })]);
      for (let round = 1; round <= Number(options.rounds); round++) {
        await Promise.all([load(infoA, 2), load(infoB, 2)]);
        await Promise.all([a.call({ op: 'usageStart', window: 'a' }), b.call({ op: 'usageStart', window: 'b' })]);
        const [loadA, loadB] = await Promise.all([load(infoA, seconds), load(infoB, seconds)]);
        const [usageA, usageB] = await Promise.all([a.call<ServerUsage>({ op: 'usageStop' }), b.call<ServerUsage>({ op: 'usageStop' })]);
        if (loadA.non2xx + loadB.non2xx + loadA.errors + loadB.errors > 0) throw new Error(`failed requests: A ${loadA.non2xx + loadA.errors}, B ${loadB.non2xx + loadB.errors}`);
        const usA = cpuPerRequest(usageA, loadA.requests.total);
        const usB = cpuPerRequest(usageB, loadB.requests.total);
        ratios.push(usB / usA);
        console.log(`pair ${pair} round ${round}: A ${usA.toFixed(1)} µs, B ${usB.toFixed(1)} µs per request; B/A ${(usB / usA).toFixed(3)}`);
      }
    } finally {
      await Promise.allSettled([a.call({ op: 'stop' }), b.call({ op: 'stop' })]);
      if (a.child.connected) a.child.disconnect();
      if (b.child.connected) b.child.disconnect();
    }
  }
  ratios.sort((x, y) => x - y);
  const middle = ratios.length / 2;
  const median = ratios.length % 2 === 1 ? (ratios[Math.floor(middle)] as number) : ((ratios[middle - 1] as number) + (ratios[middle] as number)) / 2;
  const geomean = Math.exp(ratios.reduce((sum, r) => sum + Math.log(r), 0) / ratios.length);
  console.log(`B/A over ${ratios.length} rounds: median ${median.toFixed(3)}, geometric mean ${geomean.toFixed(3)}, range ${ratios[0]?.toFixed(3)}-${ratios.at(-1)?.toFixed(3)}`);
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
