import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:net';
import { Writable } from 'node:stream';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { createAppContext } from '../../src/app/container.js';
import { loadConfig } from '../../src/config/index.js';
import { createLogger, redactHeaders, redactUrl } from '../../src/logger.js';
import { buildServer } from '../../src/app/server.js';
import { databaseKinds, openMigratedTestDatabase } from '../helpers/databases.js';

const SECRET = 'S3cr3tValue';

/**
 * A GET with the request target exactly as given, over a real connection: `app.inject` drops a
 * `#…` part, which a hand-written request does send and the router does read.
 */
function rawGet(port: number, target: string, headers: Record<string, string> = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      const lines = Object.entries({ host: 'localhost', connection: 'close', ...headers }).map(([k, v]) => `${k}: ${v}\r\n`);
      socket.write(`GET ${target} HTTP/1.1\r\n${lines.join('')}\r\n`);
    });
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk.toString()));
    socket.on('error', reject);
    socket.on('close', () => resolve(answer.slice(answer.indexOf('\r\n\r\n') + 4)));
  });
}
/** Every kind of secret that may arrive in a URL, by parameter name. */
const SECRET_NAMES = ['_key', '_secret', 'code', 'state', 'token', 'access_token', 'signature', 'api_key'];

/** The spelling tricks: each puts the secret where a router or query parser might still read it. */
function spellings(name: string, value = SECRET): string[] {
  const encodedName = [...name].map((c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`).join('');
  return [
    `/x?${name}=${value}`,
    `/x?a=1&${name}=${value}&b=2`,
    `/x#?${name}=${value}`,
    `/x#&${name}=${value}`,
    `/x#frag?a=1&${name}=${value}`,
    `/x?a=1#&${name}=${value}`,
    `/x?${encodedName}=${value}`,
    `/x?${name.toUpperCase()}=${value}`,
    `/x?${name.replace('_', '%5f')}=${value}`,
    `/x?${name}=harmless&${name}=${value}`,
    `/x?${name}=${value}&${name}=${value}`,
    `/x?${name}[]=${value}`,
    `/x?+${name}=${value}`,
    `/x;${name}=${value}`,
    `/x?a=1;${name}=${value}`,
    `/x?${name}=${value};more`,
    `/x?${name}=pre;${value}`,
    `/x?${name}=pre%26${value}`,
    `/x?${name}=pre#${value}`,
    `/x?${name}=pre?${value}`,
    `/x?${name}=pre=${value}`,
    `/x?${name.replace('_', '%255F')}=${value}`,
  ];
}

describe('redactUrl', () => {
  it('hides every kind of secret and keeps every other parameter', () => {
    expect(redactUrl('/api/v0.1/grants/contributors_addresses/7?_key=abc&_secret=s3cr3t&x=1')).toBe(
      '/api/v0.1/grants/contributors_addresses/7?_key=[redacted]&_secret=[redacted]&x=1',
    );
    expect(redactUrl('/registry/score/1?limit=5&offset=10#top')).toBe('/registry/score/1?limit=5&offset=10#top');
    expect(redactUrl('/grants/login/callback?code=abc&state=def&next=%2Fx')).toBe('/grants/login/callback?code=[redacted]&state=[redacted]&next=%2Fx');
    // The query parser reads everything up to the next & as the value: `#frag` included.
    expect(redactUrl('/x?_SECRET=a#frag')).toBe('/x?_SECRET=[redacted]');
    expect(redactUrl('/x?%5Fsecret=a&%5f%73ecret=b&_secret&y=_secret')).toBe('/x?%5Fsecret=[redacted]&%5f%73ecret=[redacted]&_secret=[redacted]&y=_secret');
    expect(redactUrl('/x?a=1&%E0%A4=2')).toBe('/x?a=1&%E0%A4=2');
    expect(redactUrl('')).toBe('');
  });

  it.each(SECRET_NAMES)('leaves no trace of a %s value, however the URL is spelled', (name) => {
    for (const url of spellings(name)) expect(redactUrl(url), url).not.toContain(SECRET);
  });

  it('hides credentials and cookies among headers', () => {
    const headers = redactHeaders({
      Authorization: `Bearer ${SECRET}`,
      cookie: `stampgate_session=${SECRET}`,
      'set-cookie': `a=${SECRET}`,
      'x-api-key': SECRET,
      'proxy-authorization': SECRET,
      referer: `https://example.org/?_secret=${SECRET}`,
      'user-agent': 'curl',
    });
    expect(JSON.stringify(headers)).not.toContain(SECRET);
    expect(headers['user-agent']).toBe('curl');
  });

  it('redacts at least every parameter the router and its query parser read, whatever the spelling', async () => {
    // The real router: whatever lands in request.query under a secret name must be gone from the log form.
    const app = Fastify({ logger: false });
    app.get('/x', async (request) => request.query);
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as { port: number };
    const secretName = (key: string) => SECRET_NAMES.includes(key.toLowerCase().replace(/^[^a-z0-9_]+/, '').replace(/\[\]$/, ''));
    try {
      let read = 0;
      for (const name of SECRET_NAMES) {
        for (const url of spellings(name, 'V4lue')) {
          const body = await rawGet(port, url);
          if (!body.startsWith('{')) continue;
          for (const [key, value] of Object.entries(JSON.parse(body) as Record<string, string | string[]>)) {
            for (const v of (Array.isArray(value) ? value : [value]).map((x) => (typeof x === 'string' ? x : JSON.stringify(x))).filter((x) => x.includes('V4lue'))) {
              if (!secretName(key)) continue;
              read++;
              expect(redactUrl(url), `${url} → ${key}=${v}`).not.toContain('V4lue');
            }
          }
        }
      }
      expect(read).toBeGreaterThan(SECRET_NAMES.length * 10);
      // The router does read a parameter after a `#` that comes before any `?`: the trick is real.
      expect(JSON.parse(await rawGet(port, '/x#&_secret=V4lue'))).toEqual({ _secret: 'V4lue' });
    } finally {
      await app.close();
    }
  });
});

describe('the process logger', () => {
  it('redacts URLs and headers logged under their usual names', () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const logger = createLogger('info', sink);
    logger.info({ url: `/grants/login/callback?code=${SECRET}&state=${SECRET}` }, 'callback');
    logger.info({ headers: { authorization: `Bearer ${SECRET}`, cookie: `stampgate_session=${SECRET}`, 'x-api-key': SECRET } }, 'headers');
    const log = lines.join('');
    expect(lines).toHaveLength(2);
    expect(log).toContain('[redacted]');
    expect(log).not.toContain(SECRET);
  });
});

describe.each(databaseKinds)('request logs (%s)', (kind) => {
  it('never contain an export secret sent in the query string', async () => {
    const { test, database } = await openMigratedTestDatabase(kind);
    const dataDir = mkdtempSync(join(tmpdir(), 'stampgate-log-'));
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const config = loadConfig({ STAMPGATE_ENV: 'development', DATA_DIR: dataDir, DATABASE_URL: test.url, LOG_LEVEL: 'info' });
    const ctx = await createAppContext(config, database, { http: true });
    const app = await buildServer(ctx, { logger: createLogger('info', sink) });
    try {
      const res = await app.inject('/api/v0.1/grants/contributors_addresses/1?_key=k1&_secret=very-secret-value');
      expect(res.statusCode).toBeGreaterThanOrEqual(400);
      let log = lines.join('');
      expect(log).toContain('_secret=[redacted]');
      expect(log).not.toContain('very-secret-value');
      // Every kind of secret in every spelling, over a real connection (fragments included), on an
      // export route, the OAuth callback and an unknown path.
      lines.length = 0;
      await app.listen({ port: 0, host: '127.0.0.1' });
      const { port } = app.server.address() as { port: number };
      for (const base of ['/api/v0.1/grants/contributors_addresses/1', '/grants/login/callback', '/no/such/path']) {
        for (const name of SECRET_NAMES) {
          for (const url of spellings(name)) {
            await rawGet(port, url.replace('/x', base), { authorization: `Bearer ${SECRET}`, cookie: `stampgate_session=${SECRET}`, 'x-api-key': SECRET });
          }
        }
      }
      log = lines.join('');
      expect(lines.length).toBeGreaterThan(100);
      expect(log).not.toContain(SECRET);
    } finally {
      await app.close();
      await ctx.close();
      await test.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
