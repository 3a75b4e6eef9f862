/**
 * A PostgreSQL cluster and a Redis of a test's own, on free ports in a temporary directory, so
 * that the test can stop, restart and cut them without touching the shared ones. PostgreSQL
 * refuses to run as root, so as root its commands run as the `postgres` user (runuser).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:net';
import { promisify } from 'node:util';
import { freePort } from './processes.js';

const run = promisify(execFile);

export function postgresBinaries(): string | null {
  for (const version of ['17', '16', '15', '14', '13']) {
    const dir = `/usr/lib/postgresql/${version}/bin`;
    if (existsSync(join(dir, 'initdb'))) return dir;
  }
  return null;
}

export interface PrivatePostgres {
  port: number;
  /** postgres://postgres@127.0.0.1:<port>/postgres */
  url: string;
  start(): Promise<void>;
  /** `pg_ctl stop -m fast`: every session is terminated (57P01) and new connections are refused. */
  stop(): Promise<void>;
  destroy(): Promise<void>;
}

export async function startPrivatePostgres(root: string): Promise<PrivatePostgres> {
  const bin = postgresBinaries();
  if (!bin) throw new Error('no PostgreSQL binaries under /usr/lib/postgresql');
  const asRoot = userInfo().uid === 0;
  const dataDir = join(root, 'pgdata');
  const socketDir = join(root, 'pgsocket');
  mkdirSync(dataDir);
  mkdirSync(socketDir);
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    // The postgres user must be able to reach the directory it works in.
    chmodSync(root, 0o755);
    for (const dir of [dataDir, socketDir]) chownSync(dir, Number(stdout.trim()), Number(gid.trim()));
    chmodSync(dataDir, 0o700);
  }
  const pgCommand = (command: string, args: string[]) =>
    asRoot ? run('runuser', ['-u', 'postgres', '--', join(bin, command), ...args]) : run(join(bin, command), args);
  await pgCommand('initdb', ['-D', dataDir, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
  const port = await freePort();
  const options = `-p ${port} -k ${socketDir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off`;
  let running = false;
  const cluster: PrivatePostgres = {
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async start() {
      await pgCommand('pg_ctl', ['-D', dataDir, '-o', options, '-l', join(socketDir, 'postgres.log'), '-w', '-t', '60', 'start']);
      running = true;
    },
    async stop() {
      await pgCommand('pg_ctl', ['-D', dataDir, '-m', 'fast', '-w', '-t', '60', 'stop']);
      running = false;
    },
    async destroy() {
      if (running) await cluster.stop().catch(() => {});
    },
  };
  await cluster.start();
  return cluster;
}

export interface PrivateRedis {
  port: number;
  url: string;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  let child: ChildProcess | null = null;
  const redis: PrivateRedis = {
    port,
    url: `redis://127.0.0.1:${port}`,
    async start() {
      child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
      for (let i = 0; i < 200; i++) {
        const up = await new Promise<boolean>((resolve) => {
          const socket = connect(port, '127.0.0.1');
          socket.on('connect', () => (socket.destroy(), resolve(true)));
          socket.on('error', () => resolve(false));
        });
        if (up) return;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error('redis-server did not start');
    },
    async stop() {
      const stopping = child;
      child = null;
      if (!stopping || stopping.exitCode !== null) return;
      const exited = new Promise((resolve) => stopping.once('exit', resolve));
      stopping.kill('SIGKILL');
      await exited;
    },
  };
  await redis.start();
  return redis;
}
