import { createHash } from 'node:crypto';
import { createServer, type RequestListener, type Server, type ServerResponse } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { Readable } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CoalescedResponse } from '../../src/http/coalesced-writes.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { databaseKinds } from '../helpers/databases.js';

/** Sends raw bytes on one connection and collects the answer until `done` says it is complete. */
function exchange(port: number, bytes: string, done: (answer: string) => boolean): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      answer += chunk;
      if (done(answer)) {
        socket.destroy();
        resolve(answer);
      }
    });
    socket.on('close', () => resolve(answer));
    socket.on('error', reject);
    socket.write(bytes, 'latin1');
  });
}

const count = (text: string, part: string) => text.split(part).length - 1;

describe('CoalescedResponse: an ended response leaves at the end of its event-loop turn', () => {
  let server: Server | null = null;
  afterEach(async () => {
    const closing = server;
    server = null;
    if (closing) await new Promise<void>((resolve) => closing.close(() => resolve()));
  });

  async function serve(listener: RequestListener, responseClass?: typeof ServerResponse): Promise<number> {
    server = responseClass ? createServer({ ServerResponse: responseClass }, listener) : createServer(listener);
    server.keepAliveTimeout = 1000;
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    return (server.address() as AddressInfo).port;
  }

  /** What the socket still holds right after `end()`, and once this turn's immediates have run. */
  async function pendingAroundEnd(responseClass?: typeof ServerResponse): Promise<{ afterEnd: number; afterTurn: number; body: string }> {
    let afterEnd = -1;
    let afterTurn = -1;
    const port = await serve((_request, response) => {
      response.end('{"held":true}');
      afterEnd = response.socket?.writableLength ?? -1;
      // Timers run in the next turn: by then the held write must have left.
      setTimeout(() => (afterTurn = response.socket?.writableLength ?? 0), 0);
    }, responseClass);
    const answer = await exchange(port, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n', (text) => text.endsWith('{"held":true}'));
    await new Promise((resolve) => setTimeout(resolve, 20));
    return { afterEnd, afterTurn, body: answer.slice(answer.indexOf('\r\n\r\n') + 4) };
  }

  it('keeps the bytes in the socket when end() returns and writes them before the next turn', async () => {
    const coalesced = await pendingAroundEnd(CoalescedResponse);
    expect(coalesced.afterEnd).toBeGreaterThan(0);
    expect(coalesced.afterTurn).toBe(0);
    expect(coalesced.body).toBe('{"held":true}');
    // Node's own response writes inside end(): the same probe sees nothing pending.
    const plain = await pendingAroundEnd();
    expect(plain.afterEnd).toBe(0);
    expect(plain.body).toBe('{"held":true}');
  });

  it('answers pipelined requests on one connection, in order', async () => {
    let next = 0;
    const port = await serve((request, response) => {
      next += 1;
      response.setHeader('content-type', 'text/plain');
      response.end(`answer ${next} for ${request.url}`);
    }, CoalescedResponse);
    const requests = [1, 2, 3, 4].map((n) => `GET /r${n} HTTP/1.1\r\nHost: x\r\n\r\n`).join('');
    const answer = await exchange(port, requests, (text) => count(text, 'answer ') === 4);
    expect(answer.match(/answer \d for \/r\d/g)).toEqual(['answer 1 for /r1', 'answer 2 for /r2', 'answer 3 for /r3', 'answer 4 for /r4']);
  });

  it('answers a request pipelined behind a body that was flushed before its end()', async () => {
    // The body leaves with Node's own nextTick uncork; end() later has nothing to write, so the
    // answer finishes (and the next one takes the socket) before the held flush: a nested
    // cork/uncork in that window must not be swallowed.
    const port = await serve((request, response) => {
      if (request.url === '/fast') return void response.end('fast');
      response.setHeader('content-length', '5');
      response.write('hello');
      setTimeout(() => response.end(), 5);
    }, CoalescedResponse);
    const twice = 'GET /stream HTTP/1.1\r\nHost: x\r\n\r\nGET /fast HTTP/1.1\r\nHost: x\r\n\r\n';
    const answer = await exchange(port, twice, (text) => text.endsWith('fast'));
    expect(answer.match(/HTTP\/1\.1 200 OK/g)).toHaveLength(2);
    expect(answer.indexOf('hello')).toBeLessThan(answer.indexOf('fast'));
    expect(answer.endsWith('\r\n\r\nfast')).toBe(true);
  });

  it('answers many connections of one turn, each with its own body', async () => {
    const port = await serve((request, response) => response.end(`{"url":"${request.url}"}`), CoalescedResponse);
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) => fetch(`http://127.0.0.1:${port}/n${i}`).then(async (res) => ({ status: res.status, body: await res.text() }))),
    );
    answers.forEach((answer, i) => expect(answer).toEqual({ status: 200, body: `{"url":"/n${i}"}` }));
  });

  it('streams a body larger than the socket buffer whole (writes before end() are not held)', async () => {
    const chunks = Array.from({ length: 256 }, (_, i) => Buffer.alloc(16 * 1024, i % 251));
    const expected = createHash('sha256').update(Buffer.concat(chunks)).digest('hex');
    const port = await serve((_request, response) => {
      response.setHeader('content-type', 'application/octet-stream');
      Readable.from(chunks).pipe(response);
    }, CoalescedResponse);
    const res = await fetch(`http://127.0.0.1:${port}/big`);
    const body = Buffer.from(await res.arrayBuffer());
    expect(body.length).toBe(256 * 16 * 1024);
    expect(createHash('sha256').update(body).digest('hex')).toBe(expected);
  });

  it('writes a held answer, then raw bytes, before its socket is destroyed in the same turn, and keeps serving', async () => {
    // As answerClientError does after an answer on the same connection: a raw write, then destroy.
    const port = await serve((request, response) => {
      response.end('last words');
      if (request.url !== '/drop') return;
      response.socket?.write(' and a raw tail');
      response.socket?.destroy();
    }, CoalescedResponse);
    const dropped = await exchange(port, 'GET /drop HTTP/1.1\r\nHost: x\r\n\r\n', () => false);
    expect(dropped.endsWith('\r\n\r\nlast words and a raw tail')).toBe(true);
    const res = await fetch(`http://127.0.0.1:${port}/next`);
    expect(await res.text()).toBe('last words');
  });

  it('closes a Connection: close exchange after its answer is written', async () => {
    const port = await serve((_request, response) => {
      response.setHeader('connection', 'close');
      response.end('last');
    }, CoalescedResponse);
    // Resolves on close only: the answer must arrive before the server ends the connection.
    const answer = await exchange(port, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n', () => false);
    expect(answer.startsWith('HTTP/1.1 200 OK')).toBe(true);
    expect(answer.endsWith('\r\n\r\nlast')).toBe(true);
  });
});

describe.each(databaseKinds)('the service answers through CoalescedResponse (%s)', (kind) => {
  let t: TestApp;
  let port: number;
  const responseClasses: unknown[] = [];
  beforeAll(async () => {
    t = await createTestApp(kind);
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    port = (t.app.server.address() as AddressInfo).port;
    t.app.server.on('request', (_request, response) => responseClasses.push(response.constructor));
  });
  afterAll(async () => t.close());

  it('uses it for every request, and answers pipelined and concurrent requests whole', async () => {
    const pipelined = await exchange(
      port,
      'GET /health/live HTTP/1.1\r\nHost: x\r\n\r\nGET /nowhere HTTP/1.1\r\nHost: x\r\n\r\nGET /health/live HTTP/1.1\r\nHost: x\r\n\r\n',
      (text) => count(text, 'HTTP/1.1 ') === 3 && text.trimEnd().endsWith('}'),
    );
    expect(pipelined.match(/HTTP\/1\.1 \d{3}/g)).toEqual(['HTTP/1.1 200', 'HTTP/1.1 404', 'HTTP/1.1 200']);
    const answers = await Promise.all(Array.from({ length: 20 }, () => fetch(`http://127.0.0.1:${port}/health/live`)));
    expect(answers.map((res) => res.status)).toEqual(Array(20).fill(200));
    await Promise.all(answers.map((res) => res.text()));
    expect(responseClasses.length).toBe(23);
    expect(responseClasses.every((responseClass) => responseClass === CoalescedResponse)).toBe(true);
  });
});
