/**
 * What the server enforces on connections and clients: forwarded headers only from trusted
 * proxies (per-IP budgets use the real client address), server timeouts against slow clients,
 * time limits on outbound calls, and where /metrics is served.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { oauthLogin } from '../../src/publicdata/exports/oauth.js';
import { WALLET_IP_BUDGET } from '../../src/scoring/wallet/routes/wallet.js';
import { listen, listenHost, metricsListenerOf } from '../../src/app/server.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { runCli } from '../helpers/cli.js';
import { databaseKinds } from '../helpers/databases.js';

/** A TCP server on a free port; `close` ends its open connections too. */
async function tcpServer(onConnection: (socket: Socket) => void = () => {}): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    onConnection(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** An endpoint that accepts connections and never answers (an RPC or OAuth endpoint that hangs). */
const silentServer = () => tcpServer();

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function app(kind: (typeof databaseKinds)[number], env: Record<string, string> = {}): Promise<TestApp> {
  const t = await createTestApp(kind, env);
  cleanups.push(t.close);
  return t;
}

describe.each(databaseKinds)('client addresses and per-IP budgets on %s', (kind) => {
  const nonce = (t: TestApp, remoteAddress: string, forwardedFor: string) =>
    t.app.inject({ url: '/registry/wallet/siwe-nonce', remoteAddress, headers: { 'x-forwarded-for': forwardedFor } });

  it('ignores X-Forwarded-For from an address that is not a trusted proxy: the SIWE nonce budget holds', async () => {
    const t = await app(kind);
    for (let i = 0; i < WALLET_IP_BUDGET; i++) {
      expect((await nonce(t, '203.0.113.7', `198.51.100.${i % 250}, 10.0.${i >> 8}.${i & 255}`)).statusCode).toBe(200);
    }
    const refused = await nonce(t, '203.0.113.7', '192.0.2.99');
    expect(refused.statusCode).toBe(429);
    expect(refused.json().code).toBe('rate_limited');
    // Another socket address has a budget of its own.
    expect((await nonce(t, '203.0.113.8', '192.0.2.99')).statusCode).toBe(200);
  }, 60_000);

  it('honours X-Forwarded-For from a trusted proxy: each client behind it has its own budget', async () => {
    const t = await app(kind, { TRUST_PROXY: '127.0.0.1, 10.1.0.0/16' });
    for (let i = 0; i < WALLET_IP_BUDGET + 20; i++) {
      expect((await nonce(t, i % 2 === 0 ? '127.0.0.1' : '10.1.2.3', `192.0.2.${i}`)).statusCode).toBe(200);
    }
    // One client behind the proxy still runs out of its own budget.
    for (let i = 0; i < WALLET_IP_BUDGET; i++) expect((await nonce(t, '127.0.0.1', '198.51.100.77')).statusCode).toBe(200);
    expect((await nonce(t, '127.0.0.1', '198.51.100.77')).statusCode).toBe(429);
    // A forged entry left of the client's address does not help: the proxy appends the address it saw.
    expect((await nonce(t, '127.0.0.1', '203.0.113.1, 198.51.100.77')).statusCode).toBe(429);
  }, 60_000);

  it('takes host and scheme from the request, not from X-Forwarded-*, when no proxy is trusted', async () => {
    const t = await app(kind);
    const headers = { 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https', host: 'api.local' };
    const offer = (await t.app.inject({ url: '/registry/wallet/siwe-nonce', remoteAddress: '203.0.113.9', headers })).json();
    expect(offer.domain).toBe('api.local');
    expect(offer.uri).toMatch(/^http:\/\/api\.local(\/|$)/);
  });
});

describe('server timeouts', () => {
  it('cuts off a client that sends its headers a byte at a time, within the headers timeout', async () => {
    const t = await app('sqlite', { HEADERS_TIMEOUT_MS: '500', REQUEST_TIMEOUT_MS: '1000' });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as { port: number };
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => {});
    const request = `GET /health/live HTTP/1.1\r\nHost: localhost\r\nX-Padding: ${'a'.repeat(200)}\r\n\r\n`;
    const started = Date.now();
    let sent = 0;
    const drip = setInterval(() => {
      if (sent < request.length && !socket.destroyed) socket.write(request[sent++]!);
    }, 50);
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk.toString()));
    await new Promise<void>((resolve) => socket.on('close', () => resolve()));
    clearInterval(drip);
    const elapsed = Date.now() - started;
    // Dripping all of it would take over 11 s; the server must end it long before.
    expect(sent).toBeLessThan(request.length);
    expect(elapsed).toBeLessThan(5000);
    expect(answer).not.toMatch(/^HTTP\/1\.1 200/);
  }, 20_000);

  it('refuses a headers timeout longer than the request timeout at start-up', async () => {
    await expect(createTestApp('sqlite', { HEADERS_TIMEOUT_MS: '20000', REQUEST_TIMEOUT_MS: '10000' })).rejects.toThrow(
      /HEADERS_TIMEOUT_MS \(20000\) must not be longer than REQUEST_TIMEOUT_MS/,
    );
  });
});

describe.each(databaseKinds)('outbound time limits on %s', (kind) => {
  it('answers 502 within OUTBOUND_TIMEOUT_MS when the Ethereum RPC endpoint never answers', async () => {
    const silent = await silentServer();
    cleanups.push(silent.close);
    const t = await app(kind, { ETH_RPC_URL: silent.url, LEGACY_BOUNTY_INDEX_ADDRESS: `0x${'11'.repeat(20)}`, OUTBOUND_TIMEOUT_MS: '300' });
    const started = Date.now();
    const res = await t.app.inject({ url: `/api/v0.1/legacy/bounty?url=${encodeURIComponent('https://github.com/a/b/issues/1')}` });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(res.statusCode).toBe(502);
    expect(res.json()).toEqual({ detail: expect.stringContaining('timed out'), code: 'upstream_unavailable' });
  }, 20_000);
});

describe('outbound time limits of the OAuth login', () => {
  it.each(['token', 'user-info'] as const)('gives up on a %s endpoint that never answers, with upstream_unavailable', async (which) => {
    const silent = await silentServer();
    cleanups.push(silent.close);
    // The token endpoint answers at once when the user-info endpoint is the silent one.
    const answering = await tcpServer((socket) =>
      socket.end('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n{"access_token":"t"}'),
    );
    cleanups.push(answering.close);
    const answeringUrl = answering.url;
    const config = loadConfig({
      OAUTH_CLIENT_ID: 'id',
      OAUTH_CLIENT_SECRET: 'secret',
      OAUTH_TOKEN_URL: which === 'token' ? `${silent.url}/token` : `${answeringUrl}/token`,
      OAUTH_USERINFO_URL: `${silent.url}/user`,
      OUTBOUND_TIMEOUT_MS: '300',
    });
    const login = oauthLogin(config);
    const { pending } = login.start('/', 'http://localhost/grants/callback');
    const started = Date.now();
    await expect(login.finish({ code: 'c', state: pending.state }, pending, 'http://localhost/grants/callback')).rejects.toMatchObject({
      code: 'upstream_unavailable',
      message: expect.stringContaining(which === 'token' ? 'token endpoint' : 'user-info endpoint'),
    });
    expect(Date.now() - started).toBeLessThan(5000);
  }, 20_000);
});

describe('/metrics and the listening interface', () => {
  it('serves /metrics on the main listener in development', async () => {
    const t = await app('sqlite');
    expect((await t.app.inject('/metrics')).statusCode).toBe(200);
  });

  it('keeps /metrics off the main listener in production, on METRICS_PORT instead', async () => {
    const t = await app('sqlite', { STAMPGATE_ENV: 'production', PUBLIC_BASE_URL: 'https://passport.example.org', HOST: '127.0.0.1', PORT: '0', METRICS_PORT: '0' });
    const main = await t.app.inject('/metrics');
    expect(main.statusCode).toBe(404);
    expect(main.json().code).toBe('not_found');
    await listen(t.app, t.ctx.config);
    const listener = metricsListenerOf(t.app)!;
    const { port } = listener.server.address() as { port: number };
    const res = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('stampgate_http_requests_total');
    // The API is not served there.
    expect((await fetch(`http://127.0.0.1:${port}/health/live`)).status).toBe(404);
  });

  it('serves /metrics on the main listener in production only when METRICS_PUBLIC is set', async () => {
    const t = await app('sqlite', { STAMPGATE_ENV: 'production', PUBLIC_BASE_URL: 'https://passport.example.org', METRICS_PUBLIC: 'true' });
    expect((await t.app.inject('/metrics')).statusCode).toBe(200);
    expect(metricsListenerOf(t.app)).toBeNull();
  });

  it('binds 127.0.0.1 in development unless HOST says otherwise, and needs HOST in production', () => {
    expect(listenHost(loadConfig({}))).toBe('127.0.0.1');
    expect(listenHost(loadConfig({ HOST: '0.0.0.0' }))).toBe('0.0.0.0');
    expect(listenHost(loadConfig({ STAMPGATE_ENV: 'production', HOST: '0.0.0.0' }))).toBe('0.0.0.0');
    expect(() => listenHost(loadConfig({ STAMPGATE_ENV: 'production' }))).toThrow(/HOST must be set in production/);
  });

  it('stampgate serve refuses to start in production without HOST (exit 2, the reason on stderr)', async () => {
    const t = await app('sqlite');
    const run = await runCli(['serve', '--no-worker'], {
      STAMPGATE_ENV: 'production',
      PUBLIC_BASE_URL: 'https://passport.example.org',
      DATABASE_URL: t.test.url,
      DATA_DIR: t.ctx.config.dataDir,
      PORT: '0',
    });
    expect(run.code).toBe(2);
    expect(run.err).toContain('HOST must be set in production');
  }, 30_000);
});
