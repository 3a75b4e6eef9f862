/**
 * SIGTERM to a real `stampgate serve` process while a submission is half received: its head
 * arrived before the signal, its body after. That request is in progress (decisions.md,
 * "Graceful shutdown") and must be finished: answered 200, recorded, DONE. A request whose head
 * arrives after the signal, on a connection that was open already, is refused with 503
 * `shutting_down`, Retry-After and Connection: close, and records nothing. Raw TCP sockets, so
 * that the test decides when each part of each request is sent.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAppContext } from '../../src/app/container.js';
import { describeSettings, loadConfig } from '../../src/config/index.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { seedAccount } from '../helpers/app.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from '../helpers/databases.js';
import { buildCli, cliEnvironment, freePort, LoggedProcess, waitFor, withTimeout } from '../helpers/processes.js';

const repoDir = fileURLToPath(new URL('../../', import.meta.url));
const workDir = mkdtempSync(join(tmpdir(), 'stampgate-shutdown-body-'));
const processes: LoggedProcess[] = [];
let cliPath = '';

beforeAll(async () => {
  mkdirSync(join(workDir, 'build'));
  cliPath = await buildCli(join(workDir, 'build'));
}, 60_000);

afterAll(async () => {
  for (const proc of processes) if (!proc.exit) proc.child.kill('SIGKILL');
  await Promise.all(processes.map((p) => withTimeout(p.exited, 10_000, p.label).catch(() => {})));
  rmSync(workDir, { recursive: true, force: true });
});

/** A connection whose bytes the test sends when it likes; `response` is everything the server wrote before it closed. */
function rawConnection(port: number): { socket: Socket; response: Promise<string> } {
  const socket = connect(port, '127.0.0.1');
  socket.setEncoding('utf8');
  let received = '';
  socket.on('data', (chunk: string) => (received += chunk));
  const response = new Promise<string>((resolve, reject) => {
    socket.on('error', reject);
    socket.on('close', () => resolve(received));
  });
  return { socket, response };
}

function parseResponse(raw: string) {
  const split = raw.indexOf('\r\n\r\n');
  const [statusLine, ...headerLines] = raw.slice(0, split).split('\r\n');
  const headers = Object.fromEntries(headerLines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
  return { status: Number(statusLine?.split(' ')[1]), headers, body: JSON.parse(raw.slice(split + 4)) as Record<string, unknown> };
}

const submissionHead = (key: string, requestId: string, length: number) =>
  `Host: 127.0.0.1\r\nX-API-KEY: ${key}\r\nX-Request-Id: ${requestId}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;

describe.each(databaseKinds)('SIGTERM with a submission body in flight, on %s', (kind) => {
  let test: TestDatabase | null = null;
  afterAll(async () => {
    await test?.drop();
  });

  it('finishes the request whose head came first (200, recorded, DONE) and refuses one whose head came after (503)', async () => {
    test = await createTestDatabase(kind);
    const dataDir = join(workDir, `${kind}-data`);
    const seeding = test.open();
    await migrateToLatest(seeding);
    const ctx = await createAppContext(loadConfig({ STAMPGATE_ENV: 'development', DATA_DIR: dataDir, DATABASE_URL: test.url }), seeding);
    const { key, scorer } = await seedAccount(ctx);
    await ctx.close();

    const port = await freePort();
    const env = cliEnvironment(describeSettings().map((s) => s.name), {
      STAMPGATE_ENV: 'development',
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'info',
      DATA_DIR: dataDir,
      DATABASE_URL: test.url,
      RETRY_AFTER_SECONDS: '7',
    });
    const serve = new LoggedProcess(`serve on ${kind}`, spawn(process.execPath, [cliPath, 'serve'], { cwd: repoDir, env, stdio: ['ignore', 'pipe', 'pipe'] }));
    processes.push(serve);
    await waitFor('serve to answer /health/ready', 60_000, async () => {
      if (serve.exit) throw new Error(`serve exited early ${JSON.stringify(serve.exit)}\n${serve.tail()}`);
      return (await fetch(`http://127.0.0.1:${port}/health/ready`).catch(() => null))?.status === 200;
    }, 100);
    const logged = (msg: string, reqId?: string) => (line: string) => {
      if (!line.startsWith('{')) return false;
      const entry = JSON.parse(line) as { msg?: string; reqId?: string };
      return entry.msg === msg && (reqId === undefined || entry.reqId === reqId);
    };

    const early = `0x${'a1'.repeat(20)}`;
    const late = `0x${'b2'.repeat(20)}`;
    const earlyBody = JSON.stringify({ address: early, scorer_id: String(scorer.id) });
    const lateBody = JSON.stringify({ address: late, scorer_id: String(scorer.id) });

    // A: the whole head now, the body after the signal.
    const a = rawConnection(port);
    a.socket.write(`POST /registry/submit-passport HTTP/1.1\r\n${submissionHead(key, 'head-before-sigterm', Buffer.byteLength(earlyBody))}`);
    await serve.waitForLine(logged('incoming request', 'head-before-sigterm'), 10_000);
    // B: an open connection with only the request line, so it is not idle and stays open through
    // the signal; the rest of its head comes after.
    const b = rawConnection(port);
    b.socket.write('POST /registry/submit-passport HTTP/1.1\r\n');
    await new Promise<void>((resolve) => (b.socket.connecting ? b.socket.once('connect', () => resolve()) : resolve()));

    serve.child.kill('SIGTERM');
    await serve.waitForLine(logged('shutting down'), 10_000);

    b.socket.write(submissionHead(key, 'head-after-sigterm', Buffer.byteLength(lateBody)) + lateBody);
    const refused = parseResponse(await withTimeout(b.response, 10_000, 'the answer on connection B'));
    expect(refused.status, serve.tail()).toBe(503);
    expect(refused.body).toEqual({ detail: expect.any(String), code: 'shutting_down' });
    expect(refused.headers['retry-after']).toBe('7');
    expect(refused.headers.connection).toBe('close');

    a.socket.write(earlyBody);
    const answered = parseResponse(await withTimeout(a.response, 15_000, 'the answer on connection A'));
    expect(answered.status, `${JSON.stringify(answered.body)}\n${serve.tail()}`).toBe(200);
    expect(answered.body).toMatchObject({ address: early, status: 'DONE', score: expect.any(String) });
    expect(answered.headers.connection).toBe('close');

    const exit = await withTimeout(serve.exited, 20_000, 'serve to exit after SIGTERM');
    expect(exit, serve.tail()).toMatchObject({ code: 0, signal: null });

    const check = test.open();
    try {
      const rows = await check.db.selectFrom('scores').select(['address', 'status']).where('scorer_id', '=', scorer.id).execute();
      expect(rows).toEqual([{ address: early, status: 'DONE' }]);
      expect(await check.db.selectFrom('scoring_jobs').select('address').where('address', '=', late).execute()).toEqual([]);
    } finally {
      await check.close();
    }
  }, 120_000);
});
