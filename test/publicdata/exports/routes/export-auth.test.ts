import type { IncomingMessage } from 'node:http';
import fastifyCookie from '@fastify/cookie';
import { OAuth2Server } from 'oauth2-mock-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeCookie } from '../../../../src/publicdata/exports/oauth.js';
import { createTestApp, type TestApp } from '../../../helpers/app.js';
import { databaseKinds } from '../../../helpers/databases.js';
import { fullFixture, importOk, wallet } from '../../fixtures.js';

const GRANT1 = '/grants/v1/api/export_addresses/grant1.json';

/**
 * The grant team login against a real OAuth 2.0 server on loopback
 * (oauth2-mock-server): our /grants/login → its /authorize (fetched, redirect
 * not followed) → our /grants/login/callback, which calls its /token and
 * /userinfo over HTTP → session cookie.
 */
describe.each(databaseKinds)('grant team login and export credentials on %s', (kind) => {
  let oauth: OAuth2Server;
  let t: TestApp;
  let authorizeQueries: Record<string, string>[] = [];
  let tokenBodies: Record<string, string>[] = [];

  beforeAll(async () => {
    oauth = new OAuth2Server();
    await oauth.issuer.keys.generate('RS256');
    await oauth.start(0, '127.0.0.1');
    const issuer = `http://127.0.0.1:${oauth.address().port}`;
    oauth.service.on('beforeAuthorizeRedirect', (_uri: unknown, req: IncomingMessage) => {
      authorizeQueries.push(Object.fromEntries(new URL(req.url ?? '', issuer).searchParams));
    });
    oauth.service.on('beforeResponse', (_response: unknown, req: IncomingMessage & { body: Record<string, string> }) => {
      tokenBodies.push(req.body);
    });
    t = await createTestApp(kind, {
      OAUTH_CLIENT_ID: 'stampgate-test',
      OAUTH_CLIENT_SECRET: 'test-client-secret',
      OAUTH_AUTHORIZE_URL: `${issuer}/authorize`,
      OAUTH_TOKEN_URL: `${issuer}/token`,
      OAUTH_USERINFO_URL: `${issuer}/userinfo`,
      OAUTH_SCOPE: 'read:user',
    });
    await importOk(t.ctx, fullFixture());
  });
  afterAll(async () => {
    await t.close();
    await oauth.stop();
  });

  interface LoginOptions {
    /** What the provider's user-info endpoint answers. */
    userinfo?: Record<string, unknown>;
    next?: string;
  }

  /** The whole browser round trip; returns the callback response. */
  async function loginFlow(options: LoginOptions = {}) {
    authorizeQueries = [];
    tokenBodies = [];
    oauth.service.once('beforeUserinfo', (response: { body: unknown }) => {
      response.body = options.userinfo ?? { sub: 'x' };
    });
    const start = await t.app.inject(`/grants/login?next=${encodeURIComponent(options.next ?? GRANT1)}`);
    expect(start.statusCode).toBe(302);
    const loginCookie = start.cookies.find((c) => c.name === 'stampgate_login')!;
    expect(loginCookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/grants/login' });
    const authorize = await fetch(start.headers.location as string, { redirect: 'manual' });
    expect(authorize.status).toBe(302);
    const back = new URL(authorize.headers.get('location')!);
    expect(`${back.origin}${back.pathname}`).toBe('http://localhost/grants/login/callback');
    return t.app.inject({ url: back.pathname + back.search, headers: { cookie: `stampgate_login=${loginCookie.value}` } });
  }

  /** Logs in and returns the `cookie` header value of the session. */
  async function loginAs(handle: string, field: 'login' | 'preferred_username' = 'login') {
    const callback = await loginFlow({ userinfo: { sub: `id-${handle}`, [field]: handle } });
    expect(callback.statusCode, callback.body).toBe(302);
    const session = callback.cookies.find((c) => c.name === 'stampgate_session')!;
    return `stampgate_session=${session.value}`;
  }

  const withCookie = (url: string, cookie: string) => t.app.inject({ url, headers: { cookie } });

  it('logs a team admin in and returns export credentials once (authorization code + state + PKCE)', async () => {
    const callback = await loginFlow({ userinfo: { sub: 'id-alice', login: 'alice' } });
    expect(callback.statusCode).toBe(302);
    expect(callback.headers.location).toBe(GRANT1);
    const session = callback.cookies.find((c) => c.name === 'stampgate_session')!;
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/grants', maxAge: 8 * 3600 });
    expect(session.value).toContain('.'); // signed
    // What the provider saw.
    const [authorize] = authorizeQueries;
    expect(authorize).toMatchObject({
      response_type: 'code',
      client_id: 'stampgate-test',
      redirect_uri: 'http://localhost:80/grants/login/callback',
      scope: 'read:user',
      code_challenge_method: 'S256',
      state: expect.stringMatching(/^[\w-]{32}$/),
    });
    expect(tokenBodies[0]).toMatchObject({
      grant_type: 'authorization_code',
      client_id: 'stampgate-test',
      client_secret: 'test-client-secret',
      redirect_uri: 'http://localhost:80/grants/login/callback',
      code_verifier: expect.any(String),
    });

    const cookie = `stampgate_session=${session.value}`;
    const first = await withCookie(GRANT1, cookie);
    expect(first.statusCode).toBe(200);
    expect(first.headers['cache-control']).toBe('private, no-store');
    const body = first.json();
    expect(body.addresses).toEqual([wallet(1), wallet(3), wallet(5)]);
    expect(body.meta.api_key).toEqual({ _key: expect.any(String), _secret: expect.any(String) });
    const { _key, _secret } = body.meta.api_key;

    // The secret is shown only in that first response and stored hashed.
    const second = (await withCookie(GRANT1, cookie)).json();
    expect(second.meta.api_key).toEqual({ _key, _secret: null });
    const stored = await t.ctx.database.db.selectFrom('export_credentials').selectAll().where('api_key', '=', _key).executeTakeFirstOrThrow();
    expect(stored.secret_hash).not.toContain(_secret);
    expect(stored.secret_hash).toMatch(/^[0-9a-f]{64}$/);

    // Later calls work without a browser, on every grant export of the grant.
    const q = `?_key=${encodeURIComponent(_key)}&_secret=${encodeURIComponent(_secret)}`;
    for (const path of [GRANT1, '/grants/v1/api/export_addresses/grant1_round1.json', '/grants/v1/api/export_addresses/grant1_round_1.json', '/grants/v1/api/export_info/grant1_round1.json']) {
      const res = await t.app.inject(`${path}${q}`);
      expect(res.statusCode, path).toBe(200);
      expect(res.json().meta.api_key).toBeUndefined();
      expect(res.headers['cache-control']).toBe('private, no-store');
    }

    // A wrong or partial pair is 401.
    for (const bad of [
      `?_key=${encodeURIComponent(_key)}&_secret=wrong`,
      `?_key=${encodeURIComponent(_key)}`,
      `?_secret=${encodeURIComponent(_secret)}`,
      `?_key=unknown&_secret=${encodeURIComponent(_secret)}`,
      `?_key=%00&_secret=%00`,
      `?_key=${encodeURIComponent(_key)}%00&_secret=${encodeURIComponent(_secret)}`,
    ]) {
      const res = await t.app.inject(`${GRANT1}${bad}`);
      expect(res.statusCode, bad).toBe(401);
      expect(res.json()).toEqual({ detail: expect.any(String), code: 'not_authenticated' });
    }
  });

  it('matches the provider login to a profile handle in any case, also from preferred_username', async () => {
    const cookie = await loginAs('CAROL', 'preferred_username');
    const res = await withCookie(GRANT1, cookie);
    expect(res.statusCode).toBe(200);
    expect(res.json().meta.api_key._key).toEqual(expect.any(String));
  });

  it('refuses a logged-in non-member with 403, on every grant export, and also with their credentials', async () => {
    const cookie = await loginAs('bob');
    for (const path of [GRANT1, '/grants/v1/api/export_addresses/grant1_round1.json', '/grants/v1/api/export_info/grant1_round1.json']) {
      const res = await withCookie(path, cookie);
      expect(res.statusCode).toBe(403);
      expect(res.json()).toEqual({ detail: expect.any(String), code: 'not_team_member' });
    }
    const own = (await withCookie('/grants/v1/api/export_addresses/grant2.json', cookie)).json();
    const { _key, _secret } = own.meta.api_key;
    const lastUsed = () => t.ctx.database.db.selectFrom('export_credentials').select('last_used_at').where('api_key', '=', _key).executeTakeFirstOrThrow();
    const before = await lastUsed();
    const res = await t.app.inject(`${GRANT1}?_key=${encodeURIComponent(_key)}&_secret=${encodeURIComponent(_secret)}`);
    expect(res.statusCode).toBe(403);
    // A refused call changes nothing, not even the credentials' last use.
    expect(await lastUsed()).toEqual(before);
    const allowed = await t.app.inject(`/grants/v1/api/export_addresses/grant2.json?_key=${encodeURIComponent(_key)}&_secret=${encodeURIComponent(_secret)}`);
    expect(allowed.statusCode).toBe(200);
    expect((await lastUsed()).last_used_at).toEqual(expect.any(Number));
  });

  it('refuses a login that matches no profile with 403', async () => {
    const res = await withCookie(GRANT1, await loginAs('mallory'));
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBe('not_team_member');
  });

  it('treats a missing, tampered, foreign-signed or expired session as anonymous (401)', async () => {
    const good = await loginAs('alice');
    const value = decodeURIComponent(good.slice('stampgate_session='.length));
    const [payload] = value.split('.');
    const forged = encodeCookie({ handle: 'alice', profileId: 1, expiresAt: Date.now() + 60_000 });
    const expired = fastifyCookie.sign(encodeCookie({ handle: 'alice', profileId: 1, expiresAt: Date.now() - 1000 }), t.ctx.publicData.sessionSecret);
    for (const cookie of [
      '',
      `stampgate_session=${payload}`,
      `stampgate_session=${encodeURIComponent(`${forged}.${value.split('.')[1]}`)}`,
      `stampgate_session=${encodeURIComponent(fastifyCookie.sign(forged, 'another-secret-another-secret-!!'))}`,
      `stampgate_session=${encodeURIComponent(expired)}`,
    ]) {
      const res = await withCookie(GRANT1, cookie);
      expect(res.statusCode).toBe(401);
      expect(res.json().code).toBe('not_authenticated');
    }
  });

  /** What a browser sends with a same-site form POST: the cookie and this service's Origin. */
  const post = (url: string, cookie: string, origin: string | null = 'http://localhost') =>
    t.app.inject({ method: 'POST', url, headers: { cookie, ...(origin === null ? {} : { origin }) } });

  it('logs out with a same-origin POST by clearing the session cookie', async () => {
    const cookie = await loginAs('alice');
    const out = await post('/grants/logout?next=/grants/grants.json', cookie);
    expect(out.statusCode).toBe(303);
    expect(out.headers.location).toBe('/grants/grants.json');
    const cleared = out.cookies.find((c) => c.name === 'stampgate_session')!;
    expect(cleared.value).toBe('');
    expect(cleared.path).toBe('/grants');
  });

  it('answers GET on the state-changing paths with 405 and changes nothing (finding 9)', async () => {
    const cookie = await loginAs('alice');
    for (const path of ['/grants/logout?next=/grants/grants.json', '/grants/export-credentials']) {
      const res = await withCookie(path, cookie);
      expect(res.statusCode, path).toBe(405);
      expect(res.json()).toEqual({ detail: expect.any(String), code: 'method_not_allowed' });
      expect(res.headers.allow).toBe('POST');
      expect(res.cookies.find((c) => c.name === 'stampgate_session')).toBeUndefined();
    }
    expect((await withCookie(GRANT1, cookie)).statusCode).toBe(200);
  });

  it('refuses a cross-site POST (Origin of another site, or none) with 403 and changes nothing (CSRF)', async () => {
    const cookie = await loginAs('alice');
    const before = (await withCookie(GRANT1, cookie)).json().meta.api_key._key;
    for (const origin of ['https://evil.example', 'null', 'http://localhost:8080', null]) {
      for (const path of ['/grants/logout', '/grants/export-credentials']) {
        const res = await post(path, cookie, origin);
        expect(res.statusCode, `${path} from ${origin}`).toBe(403);
        expect(res.json().code).toBe('permission_denied');
        expect(res.cookies.find((c) => c.name === 'stampgate_session')).toBeUndefined();
      }
    }
    expect((await withCookie(GRANT1, cookie)).json().meta.api_key._key).toBe(before);
  });

  it('leaves the one-time secret for the next GET when a HEAD with the session comes first', async () => {
    // Fresh credentials: the next session response is the one that shows the secret.
    await t.ctx.publicData.exportAuth.resetCredentials('alice');
    const cookie = await loginAs('alice');
    const pending = async () =>
      (await t.ctx.database.db.selectFrom('export_credentials as c').innerJoin('profiles as p', 'p.id', 'c.profile_id').select('c.pending_secret').where('p.handle', '=', 'alice').executeTakeFirstOrThrow())
        .pending_secret;
    expect(await pending()).toEqual(expect.any(String));
    for (const url of [GRANT1, '/grants/v1/api/export_info/grant1_round1.json']) {
      const head = await t.app.inject({ method: 'HEAD', url, headers: { cookie } });
      expect(head.statusCode).toBe(200);
      expect(head.body).toBe('');
    }
    expect(await pending()).toEqual(expect.any(String));
    const first = (await withCookie(GRANT1, cookie)).json();
    expect(first.meta.api_key).toEqual({ _key: expect.any(String), _secret: expect.any(String) });
    expect(await pending()).toBeNull();
    expect((await withCookie(GRANT1, cookie)).json().meta.api_key._secret).toBeNull();
  });

  it('rotates export credentials only by POST: the new secret is shown once, the old pair stops working', async () => {
    const cookie = await loginAs('alice');
    const old = (await withCookie(GRANT1, cookie)).json().meta.api_key._key as string;
    const rotated = await post('/grants/export-credentials', cookie);
    expect(rotated.statusCode).toBe(200);
    expect(rotated.headers['cache-control']).toBe('no-store');
    const { _key, _secret } = rotated.json().api_key;
    expect(_key).not.toBe(old);
    expect(_secret).toEqual(expect.any(String));
    expect((await t.app.inject(`${GRANT1}?_key=${encodeURIComponent(_key)}&_secret=${encodeURIComponent(_secret)}`)).statusCode).toBe(200);
    const rows = await t.ctx.database.db.selectFrom('export_credentials').selectAll().where('api_key', 'in', [old, _key]).execute();
    expect(rows.map((r) => r.api_key)).toEqual([_key]);
    expect(rows[0]!.pending_secret).toBeNull();
    // Session responses carry the key alone from now on.
    expect((await withCookie(GRANT1, cookie)).json().meta.api_key).toEqual({ _key, _secret: null });
    // Without a session there is nothing to rotate.
    expect((await post('/grants/export-credentials', '')).statusCode).toBe(401);
  });

  it('creates export credentials at login, never in an export GET', async () => {
    const cookie = await loginAs('erin');
    const profile = await t.ctx.database.db.selectFrom('profiles').select('id').where('handle_key', '=', 'erin').executeTakeFirstOrThrow();
    const rows = () => t.ctx.database.db.selectFrom('export_credentials').selectAll().where('profile_id', '=', profile.id).execute();
    expect(await rows()).toHaveLength(1);
    await t.ctx.publicData.exportAuth.resetCredentials('erin');
    const res = await withCookie('/grants/v1/api/export_addresses/grant2.json', cookie);
    expect([200, 403]).toContain(res.statusCode);
    if (res.statusCode === 200) expect(res.json().meta.api_key).toBeUndefined();
    expect(await rows()).toEqual([]);
  });

  it('identifies a login by the provider’s subject id, not by the changeable username (finding 10)', async () => {
    // carol (team member of grant 1) logs in, then renames her account at the provider.
    expect((await withCookie(GRANT1, await loginAs('CAROL', 'preferred_username'))).statusCode).toBe(200);
    const renamed = await loginFlow({ userinfo: { sub: 'id-CAROL', preferred_username: 'carol-renamed' } });
    expect(renamed.statusCode).toBe(302);
    const renamedCookie = `stampgate_session=${renamed.cookies.find((c) => c.name === 'stampgate_session')!.value}`;
    expect((await withCookie(GRANT1, renamedCookie)).statusCode).toBe(200);
    // A new account that took the old username gets none of carol's memberships.
    const impostor = await loginFlow({ userinfo: { sub: 'id-someone-else', login: 'carol' } });
    expect(impostor.statusCode).toBe(302);
    const impostorCookie = `stampgate_session=${impostor.cookies.find((c) => c.name === 'stampgate_session')!.value}`;
    const refused = await withCookie(GRANT1, impostorCookie);
    expect(refused.statusCode).toBe(403);
    expect(refused.json().code).toBe('not_team_member');
    // GitHub's numeric id counts as the subject too.
    const numeric = await loginFlow({ userinfo: { id: 4242, login: 'frank' } });
    expect(numeric.statusCode).toBe(302);
    const bound = await t.ctx.database.db.selectFrom('profiles').select('oauth_subject').where('handle_key', '=', 'frank').executeTakeFirstOrThrow();
    expect(bound.oauth_subject).toBe('4242');
  });

  it('refuses a callback whose state does not match, or without the login cookie (400)', async () => {
    const start = await t.app.inject('/grants/login');
    const loginCookie = start.cookies.find((c) => c.name === 'stampgate_login')!;
    const wrongState = await t.app.inject({
      url: '/grants/login/callback?code=abc&state=not-the-state',
      headers: { cookie: `stampgate_login=${loginCookie.value}` },
    });
    expect(wrongState.statusCode).toBe(400);
    expect(wrongState.json().code).toBe('invalid_parameter');
    const state = new URL(start.headers.location as string).searchParams.get('state')!;
    const noCookie = await t.app.inject(`/grants/login/callback?code=abc&state=${state}`);
    expect(noCookie.statusCode).toBe(400);
    const denied = await t.app.inject({
      url: `/grants/login/callback?error=access_denied&state=${state}`,
      headers: { cookie: `stampgate_login=${loginCookie.value}` },
    });
    expect(denied.statusCode).toBe(401);
    expect(denied.json().code).toBe('not_authenticated');
  });

  it('never redirects to another site after login', async () => {
    const callback = await loginFlow({ userinfo: { sub: 'id-alice', login: 'alice' }, next: '//evil.example/steal' });
    expect(callback.headers.location).toBe('/grants/grants.json');
  });

  it('answers 502 when the provider does not say who the user is or refuses the code', async () => {
    const noLogin = await loginFlow({ userinfo: { sub: 'only-a-subject' } });
    expect(noLogin.statusCode).toBe(502);
    expect(noLogin.json().code).toBe('upstream_unavailable');
    const noSubject = await loginFlow({ userinfo: { login: 'alice' } });
    expect(noSubject.statusCode).toBe(502);
    expect(noSubject.json()).toEqual({ detail: expect.stringContaining('id'), code: 'upstream_unavailable' });
    oauth.service.once('beforeResponse', (response: { body: unknown; statusCode: number }) => {
      response.body = { error: 'invalid_grant' };
      response.statusCode = 400;
    });
    const refused = await loginFlow({ userinfo: { login: 'alice' } });
    expect(refused.statusCode).toBe(502);
    expect(refused.json()).toEqual({ detail: expect.stringContaining('HTTP 400'), code: 'upstream_unavailable' });
  });
});
