/**
 * The answers a server gives outside normal service, and errors the framework raises itself:
 * all in the standard `{detail, code}` shape with X-Request-Id. Database faults are classified
 * in the one error map (toAppError), whatever route or dialect raised them.
 */
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { buildServer } from '../../src/app/server.js';
import { isDatabaseUnavailable } from '../../src/db/availability.js';
import { toAppError } from '../../src/http/errors.js';
import { drainServer, ServiceLifecycle } from '../../src/http/lifecycle.js';
import { createTestApp, seedAccount, type TestApp } from '../helpers/app.js';
import { databaseKinds } from '../helpers/databases.js';

function pgError(code: string, message: string) {
  return Object.assign(new Error(message), { code, severity: 'FATAL' });
}

describe('database faults in the error map', () => {
  it.each([
    ['a terminated backend (57P01)', pgError('57P01', 'terminating connection due to administrator command')],
    ['a server starting up (57P03)', pgError('57P03', 'the database system is starting up')],
    ['a connection failure (08006)', pgError('08006', 'connection failure')],
    ['a statement timeout (57014)', pgError('57014', 'canceling statement due to statement timeout')],
    ['a refused connection', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })],
    ['a reset connection', Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })],
    ['a connection node-postgres lost', new Error('Connection terminated unexpectedly')],
    ['a pool that could not connect in time', new Error('timeout exceeded when trying to connect')],
    ['a client that lost its connection earlier', new Error('Client has encountered a connection error and is not queryable')],
    ['a failed migration caused by a refused connection', new Error('Migration x failed', { cause: Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }) })],
    ['a SQLite lock held too long', Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' })],
    ['a SQLite I/O error', Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR_WRITE' })],
  ])('answers %s with 503 database_unavailable and Retry-After', (_what, error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
    const appError = toAppError(error, 9);
    expect(appError).toMatchObject({ code: 'database_unavailable', status: 503, headers: { 'retry-after': '9' } });
  });

  it.each([
    ['a syntax error', pgError('42601', 'syntax error at or near "selec"')],
    ['a unique violation', pgError('23505', 'duplicate key value violates unique constraint')],
    ['a SQLite constraint', Object.assign(new Error('UNIQUE constraint failed'), { code: 'SQLITE_CONSTRAINT_UNIQUE' })],
    ['a programming error', new TypeError("Cannot read properties of undefined (reading 'x')")],
  ])('leaves %s to the 500 path', (_what, error) => {
    expect(isDatabaseUnavailable(error)).toBe(false);
    expect(toAppError(error)).toBeNull();
  });
});

describe.each(databaseKinds)('a server outside normal service on %s', (kind) => {
  let t: TestApp;
  afterEach(async () => t?.close());

  it('is live but not ready while starting, and refuses other requests with database_unavailable', async () => {
    t = await createTestApp(kind, { RETRY_AFTER_SECONDS: '3' });
    const lifecycle = new ServiceLifecycle('starting');
    const app = await buildServer(t.ctx, { logger: false, lifecycle });
    try {
      expect((await app.inject('/health/live')).statusCode).toBe(200);
      const ready = await app.inject('/health/ready');
      expect(ready.statusCode).toBe(503);
      expect(ready.json().code).toBe('not_ready');
      const other = await app.inject('/registry/signing-message');
      expect(other.statusCode).toBe(503);
      expect(other.json()).toEqual({ detail: expect.any(String), code: 'database_unavailable' });
      expect(other.headers['retry-after']).toBe('3');
      expect(other.headers['x-request-id']).toEqual(expect.any(String));
      lifecycle.state = 'serving';
      expect((await app.inject('/health/ready')).statusCode).toBe(200);
    } finally {
      await app.close();
    }
  });

  it('answers requests that arrive while draining with 503 shutting_down, Retry-After and Connection: close, recording nothing', async () => {
    t = await createTestApp(kind, { RETRY_AFTER_SECONDS: '4' });
    const { key, scorer } = await seedAccount(t.ctx);
    const lifecycle = new ServiceLifecycle('serving');
    const app = await buildServer(t.ctx, { logger: false, lifecycle });
    try {
      lifecycle.state = 'draining';
      const res = await app.inject({
        method: 'POST',
        url: '/registry/submit-passport',
        headers: { 'x-api-key': key, 'x-request-id': 'late-1' },
        payload: { address: `0x${'7'.repeat(40)}`, scorer_id: String(scorer.id) },
      });
      expect(res.statusCode).toBe(503);
      expect(res.json()).toEqual({ detail: expect.any(String), code: 'shutting_down' });
      expect(res.headers['retry-after']).toBe('4');
      expect(res.headers.connection).toBe('close');
      expect(res.headers['x-request-id']).toBe('late-1');
      expect(await t.ctx.jobs.queueDepth()).toBe(0);
    } finally {
      await app.close();
    }
  });

  it('closes idle keep-alive connections at once when draining, and stops listening', async () => {
    t = await createTestApp(kind);
    const lifecycle = new ServiceLifecycle('serving');
    const app = await buildServer(t.ctx, { logger: false, lifecycle });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as { port: number };
    const socket = connect(port, '127.0.0.1');
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (received += chunk));
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    socket.write('GET /health/live HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n');
    for (let i = 0; i < 200 && !received.includes('"ok"'); i++) await new Promise((r) => setTimeout(r, 10));
    expect(received).toContain('HTTP/1.1 200');
    const started = Date.now();
    await drainServer(app, lifecycle, 5000);
    await closed;
    expect(Date.now() - started).toBeLessThan(2000);
    expect(app.server.listening).toBe(false);
  });
});

describe('errors made by the framework', () => {
  let t: TestApp;
  afterEach(async () => t?.close());

  it('answers a body over the limit and a request that is not HTTP in the standard shape with X-Request-Id', async () => {
    t = await createTestApp('sqlite', { BODY_LIMIT_BYTES: '1024' });
    const { key } = await seedAccount(t.ctx);
    const tooLarge = await t.app.inject({
      method: 'POST',
      url: '/registry/submit-passport',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      payload: 'x'.repeat(5000),
    });
    expect(tooLarge.statusCode).toBe(413);
    expect(tooLarge.json()).toEqual({ detail: expect.any(String), code: 'payload_too_large' });
    expect(tooLarge.headers['x-request-id']).toEqual(expect.any(String));

    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as { port: number };
    const raw = await new Promise<string>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      let text = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => (text += chunk));
      socket.on('close', () => resolve(text));
      socket.on('error', () => resolve(text));
      socket.write('NOT HTTP AT ALL\r\n\r\n');
    });
    expect(raw).toMatch(/^HTTP\/1\.1 400/);
    expect(raw).toMatch(/\r\nX-Request-Id: [\w-]+\r\n/i);
    expect(JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4))).toEqual({ detail: expect.any(String), code: 'invalid_request' });
  });
});

describe.each(databaseKinds)('many waiting submissions on %s', (kind) => {
  it('wait without a MaxListenersExceededWarning', async () => {
    const t = await createTestApp(kind, { SUBMIT_WAIT_MS: '20000' });
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const { scorer } = await seedAccount(t.ctx);
      // No worker runs: all 15 wait until the drain ends their waits.
      const waiting = Array.from({ length: 15 }, (_, n) => t.ctx.scores.submit(scorer.id, `0x${n.toString(16).padStart(40, '0')}`));
      await new Promise((r) => setTimeout(r, 300));
      await t.ctx.scores.drain();
      expect((await Promise.all(waiting)).every((r) => r.status === 'PROCESSING')).toBe(true);
      await new Promise((r) => setImmediate(r));
      expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
    } finally {
      process.off('warning', onWarning);
      await t.close();
    }
  });
});
