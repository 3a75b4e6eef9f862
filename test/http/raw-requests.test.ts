import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, seedAccount, type TestApp } from '../helpers/app.js';
import { databaseKinds } from '../helpers/databases.js';

/** Sends raw bytes to the server and returns everything it answers before closing the connection. */
function exchange(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('close', () => resolve(answer));
    socket.on('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNRESET' ? resolve(answer) : reject(error)));
    socket.write(bytes, 'latin1');
  });
}

function parse(answer: string): { status: number; body: unknown } {
  const [head = '', body = ''] = answer.split('\r\n\r\n');
  return { status: Number(head.split(' ')[1]), body: JSON.parse(body) };
}

describe.each(databaseKinds)('requests the HTTP parser or router refuses get the standard error body (%s)', (kind) => {
  let t: TestApp;
  let port: number;
  beforeAll(async () => {
    t = await createTestApp(kind);
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    port = (t.app.server.address() as AddressInfo).port;
  });
  afterAll(async () => t.close());

  it('answers a request line that is not HTTP with 400 invalid_request', async () => {
    const { status, body } = parse(await exchange(port, 'HELLO THERE\r\n\r\n'));
    expect(status).toBe(400);
    expect(body).toEqual({ detail: 'The request is not valid HTTP.', code: 'invalid_request' });
  });

  it('answers headers beyond the size limit with 431 headers_too_large', async () => {
    const { status, body } = parse(await exchange(port, `GET /health/live HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`));
    expect(status).toBe(431);
    expect(body).toMatchObject({ code: 'headers_too_large' });
  });

  it('answers a path that does not decode with 400 invalid_request', async () => {
    const res = await t.app.inject('/registry/stamps/%E0%A4%A');
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ detail: 'The URL path is not valid percent-encoded UTF-8.', code: 'invalid_request' });
  });

  it('validates an overlong path parameter as the parameter it is', async () => {
    const { key } = await seedAccount(t.ctx);
    const res = await t.app.inject({ url: `/registry/stamps/0x${'a'.repeat(500)}`, headers: { 'x-api-key': key } });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('invalid_address');
  });
});
