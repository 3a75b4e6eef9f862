import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSecureContext } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  DEFAULT_DISABLE_AFTER_MS,
  MAX_DELIVERY_ATTEMPTS,
  deliverWebhook,
  nextAttemptDelay,
  shouldDisable,
  type DeliverWebhookInput,
} from '../../src/webhooks/delivery.js';
import { generateWebhookSecret } from '../../src/webhooks/signing.js';
import { refusedTargets } from './refused-targets.js';

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The independent standardwebhooks verifier's answer: the parsed payload, or the error message. */
  verified: { payload: unknown } | { error: string };
}

const secret = generateWebhookSecret();
const payload = { event_id: 1001, scorer_id: 7, address: '0xabc', score: '21.75400', passing_score: true, note: 'é✓' };
let server: Server;
let base: string;
let received: Received[] = [];
let flakyCalls = 0;

function route(path: string, res: ServerResponse): void {
  if (path === '/ok') {
    res.writeHead(200, { 'content-type': 'text/plain' }).end('thanks');
  } else if (path === '/flaky') {
    flakyCalls += 1;
    res.writeHead(flakyCalls <= 2 ? 500 : 204).end();
  } else if (path === '/redirect') {
    res.writeHead(302, { location: `${base}/ok` }).end();
  } else if (path === '/gone') {
    res.writeHead(410).end('gone');
  } else if (path === '/big-then-stall') {
    // More than the read cap, then nothing: the client must stop reading instead of waiting for the end.
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    res.write(Buffer.alloc(256 * 1024, 0x61));
  } else if (path === '/hang') {
    // Never answers.
  } else {
    res.writeHead(404).end();
  }
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let verified: Received['verified'];
      try {
        verified = { payload: new Webhook(secret).verify(body, req.headers as Record<string, string>) };
      } catch (error) {
        verified = { error: (error as Error).message };
      }
      received.push({ path: req.url ?? '', headers: req.headers, body, verified });
      route(req.url ?? '', res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  received = [];
  flakyCalls = 0;
});

function attempt(overrides: Partial<DeliverWebhookInput>): ReturnType<typeof deliverWebhook> {
  return deliverWebhook({
    url: `${base}/ok`,
    secret,
    eventId: 1001,
    payload,
    timeoutMs: 10_000,
    allowPrivateTargets: true,
    production: false,
    ...overrides,
  });
}

describe('deliverWebhook to a real receiver on loopback', () => {
  it('delivers a signed JSON POST the standardwebhooks verifier accepts', async () => {
    const result = await attempt({});
    expect(result).toMatchObject({ outcome: 'delivered', status: 200 });
    expect(result.durationMs).toBeGreaterThanOrEqual(0);
    expect(received).toHaveLength(1);
    const [request] = received;
    expect(request?.verified).toEqual({ payload });
    expect(request?.body).toBe(JSON.stringify(payload));
    expect(request?.headers['webhook-id']).toBe('1001');
    expect(request?.headers['content-type']).toBe('application/json');
    expect(request?.headers['user-agent']).toBe('Stampgate-Webhooks/1');
    expect(Number(request?.headers['webhook-timestamp'])).toBeCloseTo(Date.now() / 1000, -2);
  });

  it('sends the same webhook-id on every retry: 500, 500, then 204 delivered', async () => {
    const outcomes = [];
    for (let i = 0; i < 3; i++) outcomes.push(await attempt({ url: `${base}/flaky`, eventId: 'evt_77' }));
    expect(outcomes.map((o) => [o.outcome, o.status])).toEqual([
      ['failed', 500],
      ['failed', 500],
      ['delivered', 204],
    ]);
    expect(outcomes[0]?.error).toBe('HTTP 500');
    expect(received.map((r) => r.headers['webhook-id'])).toEqual(['evt_77', 'evt_77', 'evt_77']);
    for (const request of received) expect(request.verified).toEqual({ payload });
  });

  it('fails within the timeout when the receiver never answers', async () => {
    const result = await attempt({ url: `${base}/hang`, timeoutMs: 500 });
    expect(result).toMatchObject({ outcome: 'failed', error: 'timed out after 500 ms' });
    expect(result.status).toBeUndefined();
    expect(result.durationMs).toBeGreaterThanOrEqual(450);
    expect(result.durationMs).toBeLessThan(5_000);
  });

  it('does not follow a redirect: a 3xx is a failure and the Location is never requested', async () => {
    const result = await attempt({ url: `${base}/redirect` });
    expect(result).toMatchObject({ outcome: 'failed', status: 302, error: 'redirect (HTTP 302) not followed' });
    expect(received.map((r) => r.path)).toEqual(['/redirect']);
  });

  it('counts other statuses as failures', async () => {
    expect(await attempt({ url: `${base}/gone` })).toMatchObject({ outcome: 'failed', status: 410, error: 'HTTP 410' });
  });

  it('stops reading a large response body at the cap instead of waiting for it', async () => {
    const result = await attempt({ url: `${base}/big-then-stall`, timeoutMs: 10_000 });
    expect(result).toMatchObject({ outcome: 'delivered', status: 200 });
    expect(result.durationMs).toBeLessThan(5_000);
  });

  it('throws for a payload JSON cannot represent, sending nothing (a caller bug, not a receiver failure)', async () => {
    await expect(attempt({ payload: undefined })).rejects.toThrow(TypeError);
    expect(received).toEqual([]);
  });

  it('reports a closed port as a connection failure', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    expect(await attempt({ url: `http://127.0.0.1:${port}/ok` })).toMatchObject({
      outcome: 'failed',
      error: 'connection refused',
    });
  });

  it('connects to the address the guard validated, not to a fresh DNS answer', async () => {
    // "rebind.test" exists in no DNS: only the guard's resolver knows it, so a second lookup by the HTTP client would
    // fail; delivery succeeding proves the connection used the validated address.
    const port = (server.address() as AddressInfo).port;
    const asked: string[] = [];
    const result = await attempt({
      url: `http://rebind.test:${port}/ok`,
      resolve: async (host) => {
        asked.push(host);
        return [{ address: '127.0.0.1', family: 4 }];
      },
    });
    expect(result).toMatchObject({ outcome: 'delivered', status: 200 });
    expect(asked).toEqual(['rebind.test']);
    expect(received[0]?.headers.host).toBe(`rebind.test:${port}`);
  });
});

describe('deliverWebhook over https', () => {
  it('verifies the certificate against the URL host name while connecting to the pinned address', async () => {
    // A self-signed certificate for hooks.test: the attempt must fail on it (nothing reaches the handler), and the
    // TLS server must have been asked for hooks.test (SNI), not for the IP the connection went to.
    const dir = mkdtempSync(join(tmpdir(), 'stampgate-webhook-tls-'));
    try {
      execFileSync('openssl', [
        'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=hooks.test',
        '-addext', 'subjectAltName=DNS:hooks.test', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'),
      ], { stdio: 'ignore' });
      const context = { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) };
      const serverNames: string[] = [];
      let handled = 0;
      const tlsServer = createHttpsServer(
        {
          ...context,
          SNICallback: (name, done) => {
            serverNames.push(name);
            done(null, createSecureContext(context));
          },
        },
        (_req, res) => {
          handled += 1;
          res.writeHead(200).end();
        },
      );
      await new Promise<void>((resolve) => tlsServer.listen(0, '127.0.0.1', resolve));
      const port = (tlsServer.address() as AddressInfo).port;
      try {
        const result = await attempt({
          url: `https://hooks.test:${port}/ok`,
          resolve: async () => [{ address: '127.0.0.1', family: 4 }],
        });
        expect(result).toMatchObject({ outcome: 'failed', error: 'TLS error (DEPTH_ZERO_SELF_SIGNED_CERT)' });
        expect(serverNames).toEqual(['hooks.test']);
        expect(handled).toBe(0);
      } finally {
        tlsServer.closeAllConnections();
        await new Promise((resolve) => tlsServer.close(resolve));
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('deliverWebhook refusals', () => {
  it('refuses the loopback receiver when private targets are not allowed, sending nothing', async () => {
    const result = await attempt({ allowPrivateTargets: false });
    expect(result).toMatchObject({
      outcome: 'refused',
      error: 'target refused: forbidden_address',
      refusal: { reason: 'forbidden_address', address: '127.0.0.1', kind: 'loopback' },
    });
    expect(result.status).toBeUndefined();
    expect(received).toEqual([]);
  });

  it.each(refusedTargets)('refuses %s (%s) before connecting', async (url, kind) => {
    const result = await attempt({ url, allowPrivateTargets: false });
    expect(result).toMatchObject({ outcome: 'refused', refusal: { reason: 'forbidden_address', kind } });
  });

  it('refuses plain http in production and localhost by name', async () => {
    expect(await attempt({ production: true })).toMatchObject({ outcome: 'refused', refusal: { reason: 'https_required' } });
    const port = (server.address() as AddressInfo).port;
    expect(await attempt({ url: `http://localhost:${port}/ok`, allowPrivateTargets: false })).toMatchObject({
      outcome: 'refused',
      refusal: { reason: 'forbidden_address', host: 'localhost', kind: 'loopback' },
    });
    expect(received).toEqual([]);
  });
});

describe('retry schedule', () => {
  const minute = 60_000;
  const hour = 60 * minute;
  const schedule = [5_000, 5 * minute, 30 * minute, 2 * hour, 5 * hour, 10 * hour, 10 * hour];

  it('follows about 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, then gives up', () => {
    expect(schedule.map((_, i) => nextAttemptDelay(i + 1, 0.5))).toEqual(schedule);
    expect(nextAttemptDelay(schedule.length + 1, 0.5)).toBeNull();
    expect(MAX_DELIVERY_ATTEMPTS).toBe(8);
  });

  it('jitters each delay within 0.8x to 1.2x', () => {
    schedule.forEach((base, i) => {
      expect(nextAttemptDelay(i + 1, 0)).toBe(Math.round(base * 0.8));
      const high = nextAttemptDelay(i + 1, 0.999999) ?? 0;
      expect(high).toBeLessThanOrEqual(base * 1.2);
      expect(high).toBeGreaterThan(base * 1.19);
    });
    const samples = new Set(Array.from({ length: 20 }, () => nextAttemptDelay(2, Math.random())));
    expect(samples.size).toBeGreaterThan(1);
  });

  it('rejects nonsense arguments', () => {
    for (const [a, r] of [[0, 0.5], [1.5, 0.5], [1, 1], [1, -0.1], [1, Number.NaN]] as const) {
      expect(() => nextAttemptDelay(a, r)).toThrow(RangeError);
    }
  });
});

describe('shouldDisable', () => {
  const start = new Date('2026-11-20T08:00:00Z');
  const later = (ms: number) => new Date(start.getTime() + ms);

  it('disables an endpoint after 3 days of failures without a success', () => {
    expect(DEFAULT_DISABLE_AFTER_MS).toBe(3 * 24 * 3_600_000);
    expect(shouldDisable(null, later(30 * 24 * 3_600_000))).toBe(false);
    expect(shouldDisable(start, later(DEFAULT_DISABLE_AFTER_MS - 1))).toBe(false);
    expect(shouldDisable(start, later(DEFAULT_DISABLE_AFTER_MS))).toBe(true);
    expect(shouldDisable(start, later(3_600_000), 3_600_000)).toBe(true);
  });
});
