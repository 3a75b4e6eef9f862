import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { databaseKinds } from '../helpers/databases.js';
import { testWallet } from '../helpers/stamps.js';
import { portalSignIn, signedPortalMessage } from './portal-helpers.js';

const built = mkdtempSync(join(tmpdir(), 'stampgate-portal-page-'));
mkdirSync(join(built, 'assets'));
writeFileSync(join(built, 'index.html'), '<!doctype html><title>portal</title><script type="module" src="/portal/assets/index-abc123.js"></script>');
writeFileSync(join(built, 'assets', 'index-abc123.js'), 'console.log("portal")');
writeFileSync(join(built, 'assets', 'index-abc123.css'), 'body{}');
afterAll(() => rmSync(built, { recursive: true, force: true }));

describe.each(databaseKinds)('portal page and sign-up on %s', (kind) => {
  let t: TestApp;
  afterEach(async () => t.close());

  it('serves the built page with a strict CSP and hashed assets cached for a year', async () => {
    t = await createTestApp(kind, { PORTAL_ASSETS_DIR: built });
    const redirect = await t.app.inject({ method: 'GET', url: '/portal' });
    expect(redirect.statusCode).toBe(302);
    expect(redirect.headers.location).toBe('/portal/');
    const page = await t.app.inject({ method: 'GET', url: '/portal/' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['cache-control']).toBe('no-cache');
    const csp = String(page.headers['content-security-policy']);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(page.headers['x-frame-options']).toBe('DENY');
    const script = await t.app.inject({ method: 'GET', url: '/portal/assets/index-abc123.js' });
    expect(script.body).toBe('console.log("portal")');
    expect(script.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(script.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect((await t.app.inject({ method: 'GET', url: '/portal/assets/index-abc123.css' })).headers['content-type']).toBe('text/css; charset=utf-8');
    for (const url of ['/portal/assets/nope.js', '/portal/../package.json', '/portal/%2e%2e/package.json', '/portal/index.html']) {
      const missing = await t.app.inject({ method: 'GET', url });
      expect(missing.statusCode, url).toBe(404);
      expect(Object.keys(missing.json()).sort()).toEqual(['code', 'detail']);
    }
  });

  it('says so, in the standard body, when the front end was never built', async () => {
    t = await createTestApp(kind, { PORTAL_ASSETS_DIR: join(built, 'absent') });
    const page = await t.app.inject({ method: 'GET', url: '/portal/' });
    expect(page.statusCode).toBe(503);
    expect(page.json()).toMatchObject({ code: 'not_ready' });
    expect(page.json().detail).toContain('npm run build');
  });

  it('with PORTAL_SIGNUP=closed, signs in only wallets that own an account', async () => {
    t = await createTestApp(kind, { PORTAL_SIGNUP: 'closed' });
    const owner = testWallet(501);
    const stranger = testWallet(502);
    const refused = await t.app.inject({ method: 'POST', url: '/v2/account/session', payload: await signedPortalMessage(t.app, stranger) });
    expect(refused.statusCode).toBe(403);
    expect(refused.json().detail).toContain('PORTAL_SIGNUP=closed');
    expect(await t.ctx.accounts.listAccounts()).toEqual([]);
    const account = await t.ctx.accounts.createAccount('Operator-made', owner.address);
    expect((await portalSignIn(t.app, owner)).accountId).toBe(account.id);
    await expect(t.ctx.accounts.createAccount('Second', owner.address)).rejects.toMatchObject({ code: 'invalid_request' });
  });

  it('documents the account routes in OpenAPI under the tag account, with both ways in', async () => {
    t = await createTestApp(kind);
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    expect(doc.tags.map((tag: { name: string }) => tag.name)).toContain('account');
    for (const [path, method] of [['/v2/account/scorers', 'post'], ['/v2/account/scorers/{scorer_id}', 'patch'], ['/v2/account/keys', 'post'], ['/v2/account/keys/{prefix}', 'delete'], ['/v2/account/usage', 'get'], ['/v2/account/session', 'post']]) {
      expect(doc.paths[path!]?.[method!]?.tags, `${method} ${path}`).toEqual(['account']);
    }
    expect(doc.paths['/v2/account/keys'].post.security).toEqual([{ portalSession: [] }, { apiKey: [] }]);
    expect(doc.components.securitySchemes.portalSession).toMatchObject({ type: 'apiKey', in: 'cookie', name: 'stampgate_portal' });
    expect(Object.keys(doc.paths).some((path) => path.startsWith('/portal'))).toBe(false);
  });
});
