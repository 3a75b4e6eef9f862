import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Config } from '../../config/index.js';
import { AppError } from '../../errors.js';
import { handleKey } from '../profiles.js';

/**
 * The code-hosting login of grant team members: OAuth 2.0 authorization code
 * flow with `state` and PKCE (S256) against the configured endpoints. Who logged
 * in is the user-info answer's stable subject id (`sub` in OpenID Connect, the
 * numeric `id` on GitHub); its `login` / `preferred_username` (changeable) only
 * names a profile the first time that subject logs in.
 *
 * Hand-written rather than @fastify/oauth2: the flow is three small requests,
 * the endpoints are plain configured URLs (the plugin wants host/path pairs and
 * carries simple-oauth2), and we need our own `next` redirect, user-info call
 * and error bodies anyway.
 */

/** How long a login session lasts. */
export const SESSION_TTL_MS = 8 * 60 * 60 * 1000;
/** How long a started login may take before its callback. */
export const LOGIN_TTL_MS = 10 * 60 * 1000;

export interface LoginStart {
  /** Where to send the browser. */
  authorizeUrl: string;
  /** What the signed login cookie keeps until the callback. */
  pending: PendingLogin;
}

export interface PendingLogin {
  state: string;
  verifier: string;
  next: string;
  expiresAt: number;
}

export interface Session {
  /** Lower-case handle at login, for messages only. */
  handle: string;
  /** The profile bound to the provider's subject id at login; null when none is. */
  profileId: number | null;
  expiresAt: number;
}

/** Who the provider says logged in. */
export interface LoginIdentity {
  /** The provider's stable subject id, as text. */
  subject: string;
  /** Lower-case handle (changeable at the provider). */
  handle: string;
}

/** A local path to return to after login (never another site). */
export function safeNext(raw: unknown, fallback = '/grants/grants.json'): string {
  if (typeof raw !== 'string' || raw.length > 2000) return fallback;
  // A local path of visible ASCII (percent-encode the rest); never `//host` or a backslash (other sites).
  if (!/^\/[\x21-\x7e]*$/.test(raw) || raw.startsWith('//') || raw.includes('\\')) return fallback;
  return raw;
}

/** Cookie payloads: base64url JSON (signed by the cookie plugin). */
export function encodeCookie(value: PendingLogin | Session): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

function decodeJson(text: string): Record<string, unknown> | null {
  try {
    const value = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as unknown;
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

export function decodeSession(text: string, now: number): Session | null {
  const value = decodeJson(text);
  if (!value || typeof value.handle !== 'string' || typeof value.expiresAt !== 'number' || value.expiresAt <= now) return null;
  // Sessions from before identities were subject ids carry no profileId: they no longer count.
  const { profileId } = value;
  if (profileId !== null && !(typeof profileId === 'number' && Number.isSafeInteger(profileId))) return null;
  return { handle: value.handle, profileId, expiresAt: value.expiresAt };
}

export function decodePendingLogin(text: string, now: number): PendingLogin | null {
  const value = decodeJson(text);
  if (
    !value ||
    typeof value.state !== 'string' ||
    typeof value.verifier !== 'string' ||
    typeof value.next !== 'string' ||
    typeof value.expiresAt !== 'number' ||
    value.expiresAt <= now
  ) {
    return null;
  }
  return { state: value.state, verifier: value.verifier, next: safeNext(value.next), expiresAt: value.expiresAt };
}

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** `sub` (OpenID Connect) or `id` (GitHub, a number): the account's id that never changes. */
function subjectOf(user: Record<string, unknown>): string | null {
  for (const value of [user.sub, user.id]) {
    if (typeof value === 'string' && value !== '' && value.length <= 200) return value;
    if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  }
  return null;
}

export function oauthLogin(config: Config, clock: () => number = Date.now, fetchImpl: typeof fetch = fetch) {
  const enabled = config.oauthClientId !== null;

  function requireEnabled(): void {
    if (!enabled) {
      throw new AppError('not_found', 'Login is not configured on this server; use _key and _secret, or ask the operator to set OAUTH_CLIENT_ID.');
    }
  }

  async function upstream(what: string, request: () => Promise<Response>): Promise<Record<string, unknown>> {
    let response: Response;
    let text: string;
    try {
      response = await request();
      // Inside the try: the time limit (OUTBOUND_TIMEOUT_MS) also ends a body that stalls.
      text = await response.text();
    } catch {
      throw new AppError('upstream_unavailable', `The login provider's ${what} endpoint could not be reached in time; try again later.`);
    }
    let body: Record<string, unknown> | null = null;
    try {
      const parsed = JSON.parse(text) as unknown;
      if (typeof parsed === 'object' && parsed !== null) body = parsed as Record<string, unknown>;
    } catch {
      // Some token endpoints answer form-encoded unless asked for JSON.
      body = Object.fromEntries(new URLSearchParams(text));
    }
    if (!response.ok || !body) {
      throw new AppError('upstream_unavailable', `The login provider's ${what} endpoint refused the request (HTTP ${response.status}).`);
    }
    return body;
  }

  return {
    enabled,

    /** Step 1: where to send the browser, and what to remember until it comes back. */
    start(next: unknown, redirectUri: string): LoginStart {
      requireEnabled();
      const state = randomBytes(24).toString('base64url');
      const verifier = randomBytes(32).toString('base64url');
      const url = new URL(config.oauthAuthorizeUrl);
      url.searchParams.set('response_type', 'code');
      url.searchParams.set('client_id', config.oauthClientId!);
      url.searchParams.set('redirect_uri', redirectUri);
      url.searchParams.set('scope', config.oauthScope);
      url.searchParams.set('state', state);
      url.searchParams.set('code_challenge', createHash('sha256').update(verifier).digest('base64url'));
      url.searchParams.set('code_challenge_method', 'S256');
      return { authorizeUrl: url.toString(), pending: { state, verifier, next: safeNext(next), expiresAt: clock() + LOGIN_TTL_MS } };
    },

    /**
     * Step 2: checks `state` against the pending login, exchanges the code for
     * an access token and reads who the user is.
     */
    async finish(
      query: { code?: string; state?: string; error?: string },
      pending: PendingLogin | null,
      redirectUri: string,
    ): Promise<LoginIdentity> {
      requireEnabled();
      if (!pending || !query.state || !sameText(query.state, pending.state)) {
        throw new AppError('invalid_parameter', 'This login link is stale or was not started here; start again at /grants/login.');
      }
      if (query.error) throw new AppError('not_authenticated', 'The login provider did not log you in; start again at /grants/login.');
      if (!query.code) throw new AppError('invalid_parameter', 'The login provider sent no authorization code.');

      const token = await upstream('token', () =>
        fetchImpl(config.oauthTokenUrl, {
          method: 'POST',
          headers: { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({
            grant_type: 'authorization_code',
            code: query.code!,
            redirect_uri: redirectUri,
            client_id: config.oauthClientId!,
            client_secret: config.oauthClientSecret ?? '',
            code_verifier: pending.verifier,
          }),
          signal: AbortSignal.timeout(config.outboundTimeoutMs),
        }),
      );
      if (typeof token.access_token !== 'string' || token.access_token === '') {
        throw new AppError('upstream_unavailable', 'The login provider answered without an access token.');
      }
      const user = await upstream('user-info', () =>
        fetchImpl(config.oauthUserInfoUrl, {
          headers: { accept: 'application/json', authorization: `Bearer ${token.access_token as string}`, 'user-agent': 'stampgate' },
          signal: AbortSignal.timeout(config.outboundTimeoutMs),
        }),
      );
      const login = typeof user.login === 'string' ? user.login : user.preferred_username;
      if (typeof login !== 'string' || login.trim() === '' || login.length > 200) {
        throw new AppError('upstream_unavailable', 'The login provider did not say who you are (no login or preferred_username).');
      }
      const subject = subjectOf(user);
      if (subject === null) {
        throw new AppError('upstream_unavailable', 'The login provider did not give the account\'s stable id (no sub or id).');
      }
      return { subject, handle: handleKey(login) };
    },
  };
}

export type OAuthLogin = ReturnType<typeof oauthLogin>;
