/**
 * Bad-input and abuse tests, driven by the running app's own OpenAPI document so that every
 * documented operation is covered, including ones added later. For each operation a valid
 * baseline request is built (path and required query parameters, body, and whatever
 * authentication the route turns out to need), then one input at a time is replaced by values
 * from fixed tables of nasty inputs and by fast-check arbitraries. Every refused request must be
 * a 4xx with exactly `{"detail","code"}`, nothing internal in it, and must leave every table of
 * the database as it was; nothing may answer 500 or hang.
 */
import { Readable } from 'node:stream';
import cookiePlugin from '@fastify/cookie';
import fc from 'fast-check';
import { createSiweMessage } from 'viem/siwe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signingMessageFor } from '../../src/scoring/scores/nonces.service.js';
import { issueCredential } from '../../src/scoring/stamps/dev-issuer.js';
import {
  type AbuseRequest,
  type AbuseResponse,
  codeOf,
  CpuCosts,
  DatabaseWatch,
  deeplyNested,
  describeRequest,
  encoded,
  encodeLoose,
  HTTP_METHODS,
  INTEGER_STRINGS,
  jsonFor,
  listOperations,
  MALFORMED_ADDRESSES,
  MALFORMED_SIGNATURES,
  MALFORMED_TIMESTAMPS,
  MALFORMED_TOKENS,
  type Nasty,
  NASTY_CORE,
  NASTY_STRINGS,
  RAW_CORE,
  type OpenApiDocument,
  type OpenApiParameter,
  type Operation,
  RAW_ESCAPES,
  readable,
  refusalProblems,
  sampleFor,
  send,
  servedRoutes,
  textFor,
  WRONG_TYPES,
} from '../helpers/abuse.js';
import type { AppContext } from '../../src/app-context.js';
import { createTestApp, seedAccount, type TestApp } from '../helpers/app.js';
import { databaseKinds, type DatabaseKind } from '../helpers/databases.js';
import { giveStamps, testWallet } from '../helpers/stamps.js';

/** fast-check runs per input (ABUSE_RUNS=150 for a deeper local run); the fixed tables come on top. */
const RUNS = Number(process.env.ABUSE_RUNS ?? 25);
// A failure is reported at once, unshrunk: each run is a request, and the request is in the message.
const PROPERTY_OPTIONS = { numRuns: RUNS, endOnFailure: true };
const day = 86_400_000;
/** CPU time any one request may cost (ABUSE_CPU_BUDGET_MS to loosen on a loaded machine). */
const CPU_BUDGET_MS = Number(process.env.ABUSE_CPU_BUDGET_MS ?? 50);

// Server-side routes that are not part of the API document on purpose.
// The developer portal's page and its files (/portal) are the web UI, not API operations.
const UNDOCUMENTED = [/^\/docs(\/|$)/, /^\/openapi\.json$/, /^\/metrics$/, /^\/portal(\/|$)/];

// GET operations that legitimately write when they succeed (the only writes a GET may make).
const WRITING_GETS: Record<string, string[]> = {
  'GET /registry/signing-message': ['nonces'],
  'GET /registry/wallet/siwe-nonce': ['wallet_siwe_nonces'],
  'GET /v2/account/siwe-nonce': ['portal_siwe_nonces'],
  'GET /grants/v1/api/export_addresses/{file}': ['export_credentials'],
  'GET /grants/v1/api/export_info/{file}': ['export_credentials'],
  // v2 scores now and records the result as a v1 submission would (v2.md).
  'GET /v2/stamps/{scorer_id}/score/{address}': ['scores', 'score_events', 'nullifier_holds', 'webhook_outbox'],
};

// Operations with a body limit of their own instead of BODY_LIMIT_BYTES.
const ROUTE_BODY_LIMITS: Record<string, (config: AppContext['config']) => number> = {
  // Up to 100,000 addresses as JSON or CSV (BATCH_BODY_LIMIT_BYTES).
  'POST /v2/scorers/{scorer_id}/batches': (config) => config.batchBodyLimitBytes,
};

// A port nothing listens on: the legacy bounty read and the OAuth token exchange fail fast (502).
const DEAD_URL = 'http://127.0.0.1:9';

function abuseEnv(): Record<string, string> {
  return {
    RATE_LIMIT_TIER4: '100000000',
    API_KEY_CACHE_TTL_MS: '60000',
    SUBMIT_WAIT_MS: '0',
    ETH_RPC_URL: DEAD_URL,
    // Smart-wallet checks would default to ETH_RPC_URL, and a forged signature against a dead
    // endpoint is rightly a 502 (tested in smart-wallet-signatures.test.ts); here forgeries are EOA refusals.
    SMART_WALLET_RPC_URL: 'off',
    LEGACY_BOUNTY_INDEX_ADDRESS: `0x${'11'.repeat(20)}`,
    OAUTH_CLIENT_ID: 'abuse-client',
    OAUTH_CLIENT_SECRET: 'abuse-secret',
    OAUTH_AUTHORIZE_URL: `${DEAD_URL}/authorize`,
    OAUTH_TOKEN_URL: `${DEAD_URL}/token`,
    OAUTH_USERINFO_URL: `${DEAD_URL}/user`,
    // Usage counters reach the database in the background (every request counts, refused ones
    // and 429s included, by design); only at shutdown here, so each request's own writes are seen.
    USAGE_FLUSH_MS: '600000',
  };
}

// The operations, read once from a throw-away app: the tests below are generated from them.
const documented = await (async () => {
  const t = await createTestApp('sqlite', abuseEnv());
  try {
    const doc = (await t.app.inject('/openapi.json')).json() as OpenApiDocument;
    return { operations: listOperations(doc) };
  } finally {
    await t.close();
  }
})();

type AuthKind = 'none' | 'apiKey' | 'walletSession' | 'grantsSession' | 'portalSession';
const AUTH_KINDS: AuthKind[] = ['none', 'apiKey', 'walletSession', 'grantsSession', 'portalSession'];
const AUTH_CODES = ['missing_api_key', 'invalid_api_key', 'invalid_session', 'not_authenticated'];

type Wallet = ReturnType<typeof testWallet>;

interface Expectation {
  /** The request must not succeed. */
  refuse?: boolean;
  status?: number[];
  code?: string[];
  /** The caller's own inputs, which a detail may quote back. */
  echoed?: string[];
}

/** Everything one database's run needs. */
class AbuseRun {
  t!: TestApp;
  key = '';
  keyPrefix = '';
  revokedKey = '';
  scorerId = 0;
  signedScorerId = 0;
  readonly alice = testWallet(4101);
  readonly bob = testWallet(4102);
  grantsCookie = '';
  signedOutToken = '';
  private watch!: DatabaseWatch;
  private ip = 0;
  private walletSeed = 5000;
  private walletToken = '';
  private walletAddress = '';
  private walletUses = Infinity;
  private portalSeed = 6000;
  private portalHeaders: Record<string, string> | null = null;
  requests = 0;
  readonly cpu = new CpuCosts();

  constructor(readonly kind: DatabaseKind) {}

  get app() {
    return this.t.app;
  }

  get db() {
    return this.t.ctx.database.db;
  }

  async setUp(): Promise<void> {
    this.t = await createTestApp(this.kind, abuseEnv());
    this.watch = new DatabaseWatch(this.db);
    await this.watch.install();
    const seeded = await seedAccount(this.t.ctx, { tier: 4 });
    this.key = seeded.key;
    this.keyPrefix = seeded.apiKey.prefix;
    this.scorerId = seeded.scorer.id;
    const signed = await this.t.ctx.accounts.createScorer(seeded.account.id, { name: 'Signatures required', type: 'binary' });
    await this.t.ctx.accounts.updateScorer(signed.id, { requiresSignature: true });
    this.signedScorerId = signed.id;
    const revoked = await this.t.ctx.apiKeys.create(seeded.account.id, { tier: 4 });
    await this.t.ctx.apiKeys.revoke(revoked.apiKey.prefix);
    this.revokedKey = revoked.key;
    await giveStamps(this.t.ctx, this.alice.address, ['Google', 'Discord']);
    await this.t.ctx.publicData.imports.loadDemoDataIfEmpty();
    const aliceDev = await this.t.ctx.database.db.selectFrom('profiles').select('id').where('handle_key', '=', 'alice-dev').executeTakeFirstOrThrow();
    this.grantsCookie = this.sessionCookie({ handle: 'alice-dev', profileId: aliceDev.id, expiresAt: Date.now() + day });
    // A wallet session that has ended: its token must never work again.
    const ended = await this.signIn(testWallet(4999));
    await send(this.app, { method: 'DELETE', url: '/registry/wallet/session', headers: { authorization: `Bearer ${ended}` }, remoteAddress: this.nextIp() });
    this.signedOutToken = ended;
    await this.resync();
  }

  async close(): Promise<void> {
    await this.t?.close();
  }

  /** Accepts whatever the test itself changed in the database since the last request. */
  async resync(): Promise<void> {
    await this.watch.changes();
  }

  nextIp(): string {
    const n = ++this.ip;
    return `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
  }

  /** A signed `stampgate_session` cookie header value, as the login would set it. */
  sessionCookie(payload: unknown, secret = this.t.ctx.publicData.sessionSecret): string {
    const value = Buffer.from(typeof payload === 'string' ? payload : JSON.stringify(payload)).toString('base64url');
    return `stampgate_session=${encodeURIComponent(cookiePlugin.sign(value, secret))}`;
  }

  async siweMessage(wallet: Wallet, overrides: Partial<Parameters<typeof createSiweMessage>[0]> = {}): Promise<string> {
    const offer = (await send(this.app, { method: 'GET', url: '/registry/wallet/siwe-nonce', remoteAddress: this.nextIp() })).body;
    const o = JSON.parse(offer) as { nonce: string; domain: string; uri: string; chainId: number; statement: string; expiresAt: string };
    return createSiweMessage({
      address: wallet.account.address,
      chainId: o.chainId,
      domain: o.domain,
      nonce: o.nonce,
      uri: o.uri,
      statement: o.statement,
      version: '1',
      issuedAt: new Date(),
      expirationTime: new Date(o.expiresAt),
      ...overrides,
    });
  }

  async signIn(wallet: Wallet): Promise<string> {
    const message = await this.siweMessage(wallet);
    const signature = await wallet.account.signMessage({ message });
    const res = await send(this.app, {
      method: 'POST',
      url: '/registry/wallet/session',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ message, signature }),
      remoteAddress: this.nextIp(),
    });
    if (res.statusCode !== 200) throw new Error(`wallet sign-in failed: ${res.statusCode} ${res.body}`);
    return (JSON.parse(res.body) as { token: string }).token;
  }

  /** A developer portal sign-in: the cookie, its CSRF token and this origin, as the page sends them. */
  async portalSignIn(wallet: Wallet): Promise<Record<string, string>> {
    const offer = JSON.parse((await send(this.app, { method: 'GET', url: '/v2/account/siwe-nonce', remoteAddress: this.nextIp() })).body) as {
      nonce: string; domain: string; uri: string; chainId: number; statement: string; expiresAt: string;
    };
    const message = createSiweMessage({
      address: wallet.account.address, chainId: offer.chainId, domain: offer.domain, nonce: offer.nonce, uri: offer.uri,
      statement: offer.statement, version: '1', issuedAt: new Date(), expirationTime: new Date(offer.expiresAt),
    });
    const res = await send(this.app, {
      method: 'POST',
      url: '/v2/account/session',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ message, signature: await wallet.account.signMessage({ message }) }),
      remoteAddress: this.nextIp(),
    });
    if (res.statusCode !== 200) throw new Error(`portal sign-in failed: ${res.statusCode} ${res.body}`);
    const cookie = String(res.headers['set-cookie']).split(';')[0]!;
    return { cookie, 'x-csrf-token': (JSON.parse(res.body) as { csrf_token: string }).csrf_token, origin: 'http://localhost' };
  }

  /** The address of the current wallet session (for credentials it may write). */
  async walletSessionAddress(): Promise<string> {
    await this.authHeaders('walletSession');
    this.walletUses--;
    return this.walletAddress;
  }

  /**
   * Credentials of a kind. Wallet sessions are rotated well before their per-address rate
   * budget (300) runs out; every request without a session comes from a new IP address.
   */
  async authHeaders(kind: AuthKind): Promise<Record<string, string>> {
    switch (kind) {
      case 'none':
        return {};
      case 'apiKey':
        return { 'x-api-key': this.key };
      case 'grantsSession':
        return { cookie: this.grantsCookie };
      case 'portalSession': {
        if (!this.portalHeaders) {
          this.portalHeaders = await this.portalSignIn(testWallet(++this.portalSeed));
          await this.resync();
        }
        return { ...this.portalHeaders };
      }
      case 'walletSession': {
        if (this.walletUses >= 250) {
          const wallet = testWallet(++this.walletSeed);
          this.walletToken = await this.signIn(wallet);
          this.walletAddress = wallet.address;
          this.walletUses = 0;
          await this.resync();
        }
        this.walletUses++;
        return { authorization: `Bearer ${this.walletToken}` };
      }
    }
  }

  /**
   * Sends one request and checks it: never a 500 or a hang; a refusal is a 4xx with the
   * standard body and leaves the database as it was; a successful GET writes only what
   * WRITING_GETS allows; nothing pollutes Object.prototype.
   */
  async exercise(op: Operation | null, request: AbuseRequest, expectation: Expectation = {}): Promise<AbuseResponse> {
    this.requests++;
    const sent = { remoteAddress: this.nextIp(), ...request };
    const res = await this.cpu.measure(op?.id ?? `${request.method} (no such operation)`, sent, () => send(this.app, sent));
    const changed = await this.watch.changes();
    const problems: string[] = [];
    if (res.statusCode >= 400) {
      const upstreamErrors = (op?.statuses ?? []).filter((s) => s > 500 && s < 600);
      problems.push(...refusalProblems(res, expectation.echoed ?? [], upstreamErrors));
      if (changed.length > 0) problems.push(`the refused request changed the database: ${changed.join(', ')}`);
    } else {
      if (expectation.refuse) problems.push('the request was accepted');
      if (request.method === 'GET' && changed.length > 0) {
        const allowed = WRITING_GETS[op?.id ?? ''] ?? [];
        const unexpected = changed.filter((c) => !allowed.includes(c.split(' ')[0]!));
        if (unexpected.length > 0) problems.push(`a GET changed the database: ${unexpected.join(', ')}`);
      }
    }
    if (expectation.status && !expectation.status.includes(res.statusCode)) problems.push(`expected status ${expectation.status.join(' or ')}`);
    if (expectation.code && !expectation.code.includes(codeOf(res) ?? '')) problems.push(`expected code ${expectation.code.join(' or ')}`);
    if (Object.prototype.hasOwnProperty.call(Object.prototype, 'polluted')) problems.push('Object.prototype was polluted');
    if (res.statusCode < 400 && request.headers?.authorization === `Bearer ${this.walletToken}`) {
      // A successful request may have ended the session (sign-out): start a new one next time.
      if (!(await this.t.ctx.wallet.sessions.resolve(this.walletToken))) this.walletUses = Infinity;
    }
    if (res.statusCode < 400 && this.portalHeaders && request.headers?.cookie === this.portalHeaders.cookie) {
      // A successful request may have signed the portal session out.
      const token = this.portalHeaders.cookie!.slice('stampgate_portal='.length);
      if (!(await this.t.ctx.portal.sessions.resolve(token))) this.portalHeaders = null;
    }
    if (problems.length > 0) {
      const body = res.body.length > 600 ? `${res.body.slice(0, 600)}…` : res.body;
      throw new Error(`${describeRequest(request)}\n  → ${res.statusCode} ${body}\n  problems: ${problems.join('; ')}`);
    }
    return res;
  }
}

// ---------------------------------------------------------------------------------------------
// Baselines

/** Values for parameters and fields the seeded data gives meaning to; others come from the schema. */
async function hint(run: AbuseRun, op: Operation, name: string): Promise<unknown> {
  switch (name) {
    case 'address':
      return run.alice.address;
    case 'scorer_id':
      return String(run.scorerId);
    case 'file':
      return op.path.includes('export_info') ? 'grant1_round1.json' : 'grant1.json';
    case 'url':
      return 'https://github.com/gitcoinco/web/issues/1/';
    case 'providers':
      return ['Google'];
    case 'credentials': {
      const address = await run.walletSessionAddress();
      return [
        issueCredential({
          privateKey: run.t.ctx.devIssuerKey!,
          address,
          provider: 'Linkedin',
          issuedAt: new Date(),
          expiresAt: new Date(Date.now() + 90 * day),
        }),
      ];
    }
    default:
      return undefined;
  }
}

/** Whole bodies that need more than field hints: a freshly signed sign-in message. */
async function bodyOverride(run: AbuseRun, op: Operation): Promise<unknown> {
  if (op.id === 'POST /registry/wallet/session') {
    const message = await run.siweMessage(run.bob);
    return { message, signature: await run.bob.account.signMessage({ message }) };
  }
  return undefined;
}

interface Baseline {
  op: Operation;
  auth: AuthKind;
  path: Record<string, string>;
  query: [string, string][];
  body: Record<string, unknown> | unknown | undefined;
}

async function paramValue(run: AbuseRun, op: Operation, p: OpenApiParameter): Promise<string> {
  const value = (await hint(run, op, p.name)) ?? sampleFor(p.schema);
  return encodeLoose(String(value));
}

async function baselineFor(run: AbuseRun, op: Operation, auth: AuthKind): Promise<Baseline> {
  const path: Record<string, string> = {};
  for (const p of op.pathParams) path[p.name] = await paramValue(run, op, p);
  const query: [string, string][] = [];
  for (const p of op.queryParams.filter((q) => q.required)) query.push([p.name, await paramValue(run, op, p)]);
  let body: unknown;
  if (op.body) {
    body = await bodyOverride(run, op);
    if (body === undefined) {
      const sample = sampleFor(op.body);
      if (typeof sample === 'object' && sample !== null && !Array.isArray(sample)) {
        const fields = sample as Record<string, unknown>;
        for (const name of Object.keys(op.body.properties ?? {})) {
          const hinted = await hint(run, op, name);
          if (hinted !== undefined) fields[name] = hinted;
        }
      }
      body = sample;
    }
  }
  await run.resync();
  return { op, auth, path, query, body };
}

interface Parts {
  path: Record<string, string>;
  /** Encoded query pairs; a pair with value null is sent as a bare key. */
  query: [string, string | null][];
  body: unknown;
  /** Raw payload instead of the JSON of `body`. */
  payload?: string | Buffer | Readable;
  headers: Record<string, string>;
}

/** The baseline request with one change applied. */
async function requestFrom(run: AbuseRun, b: Baseline, change: (parts: Parts) => void = () => {}, auth: AuthKind = b.auth): Promise<AbuseRequest> {
  const parts: Parts = {
    path: { ...b.path },
    query: b.query.map(([k, v]) => [k, v]),
    body: b.body === undefined ? undefined : structuredClone(b.body),
    headers: { ...(await run.authHeaders(auth)) },
  };
  if (b.body !== undefined) parts.headers['content-type'] = 'application/json';
  change(parts);
  const url =
    b.op.path.replace(/\{(\w+)\}/g, (_, name: string) => parts.path[name] ?? '') +
    (parts.query.length > 0 ? `?${parts.query.map(([k, v]) => (v === null ? k : `${k}=${v}`)).join('&')}` : '');
  const payload = parts.payload ?? (parts.body === undefined ? undefined : JSON.stringify(parts.body));
  return { method: b.op.method, url, headers: parts.headers, payload };
}

/** Which auth the operation needs: the first kind whose baseline is not refused with 401. */
async function discover(run: AbuseRun, op: Operation): Promise<{ auth: AuthKind; res: AbuseResponse }> {
  const refusals: string[] = [];
  for (const auth of AUTH_KINDS) {
    const b = await baselineFor(run, op, auth);
    const res = await run.exercise(op, await requestFrom(run, b));
    if (res.statusCode !== 401) return { auth, res };
    refusals.push(`${auth}: ${res.body}`);
  }
  throw new Error(`${op.id}: the baseline request was refused with 401 by every kind of authentication:\n${refusals.join('\n')}`);
}

// ---------------------------------------------------------------------------------------------
// Tables of values per input

interface Case {
  value: Nasty;
  expect?: Expectation;
}

const text = (value: string, expect?: Expectation): Case => ({ value: { text: value }, expect });
const raw = (value: string, expect?: Expectation): Case => ({ value: { raw: value }, expect });

const accepts = (pattern: string | undefined, value: string) => pattern === undefined || new RegExp(pattern, 'u').test(value);
/** A parameter or field whose schema demands a wallet address (so a malformed one must get invalid_address). */
const hasAddressPattern = (p: { name: string; schema?: { pattern?: string } }) =>
  /address/.test(p.name) && p.schema?.pattern !== undefined && accepts(p.schema.pattern, `0x${'ab'.repeat(20)}`) && !accepts(p.schema.pattern, '0x12');

/** Fixed cases for a parameter, with what each must get where the contract says so. */
function casesFor(p: OpenApiParameter): Case[] {
  const type = p.schema?.type;
  // Every nasty string for identifiers and other constrained text; the core few where a table of its own follows.
  const full = type === 'string' && !accepts(p.schema?.pattern, 'Any text, 1.') && !/timestamp/.test(p.name);
  const cases: Case[] = full || p.in === 'path'
    ? [...NASTY_STRINGS.map((s) => text(s)), ...RAW_ESCAPES.map((s) => raw(s))]
    : [...NASTY_CORE.map((s) => text(s)), ...RAW_CORE.map((s) => raw(s))];
  if (type === 'integer' || type === 'number') {
    // The contract: limit and offset are non-negative integers, limit at most 1000.
    const mustRefuse = ['-1', '1.5', '1_000', '١', '１', 'NaN', '1,2', 'true', '[]'];
    const code = p.name === 'limit' ? 'invalid_limit' : p.name === 'offset' ? 'invalid_offset' : undefined;
    for (const value of INTEGER_STRINGS) {
      const refused = code !== undefined && (mustRefuse.includes(value) || (p.name === 'limit' && Number(value) > 1000));
      cases.push(text(value, refused ? { refuse: true, status: [400], code: [code] } : undefined));
    }
  }
  if (hasAddressPattern(p)) {
    for (const value of MALFORMED_ADDRESSES) cases.push(text(value, { refuse: true, status: [400], code: ['invalid_address'] }));
  }
  if (/timestamp/.test(p.name)) {
    const unparsable = [
      'yesterday',
      '2026-13-01T00:00:00Z',
      '2026-03-01T25:00:00Z',
      '2026-03-01T12:60:00Z',
      '2026-03-01T12:00:00+99:00',
      '2026-03-01T12:00:00ZZ',
      'NaN',
      '1e100',
    ];
    for (const value of MALFORMED_TIMESTAMPS) {
      cases.push(text(value, unparsable.includes(value) ? { refuse: true, status: [400], code: ['invalid_timestamp'] } : undefined));
    }
  }
  if (/token/.test(p.name)) for (const value of MALFORMED_TOKENS) cases.push(text(value));
  if (type === 'boolean') for (const value of ['yes', 'TRUE', '2', 'tru', '1.0', 'on']) cases.push(text(value));
  return cases;
}

/** Fixed JSON values for a body field. */
function fieldCases(name: string, schema: OpenApiParameter['schema']): { value: unknown; expect?: Expectation }[] {
  const cases: { value: unknown; expect?: Expectation }[] = [
    ...NASTY_STRINGS.map((value) => ({ value })),
    ...WRONG_TYPES.map((value) => ({ value })),
  ];
  if (hasAddressPattern({ name, schema })) {
    for (const value of MALFORMED_ADDRESSES) cases.push({ value, expect: { refuse: true, status: [400], code: ['invalid_address'] } });
  }
  if (/signature/.test(name)) for (const value of MALFORMED_SIGNATURES) cases.push({ value });
  return cases;
}

const MALFORMED_JSON: (string | Buffer)[] = [
  '{',
  '}',
  '{"a":}',
  '{"a":1,}',
  "{'a':1}",
  'nul',
  '{"a":NaN}',
  '{"a":Infinity}',
  '[1,2',
  '"unterminated',
  '{"a":"\\x41"}',
  '{"a":01}',
  '{"a":1}{"b":2}',
  '{"a":1} trailing',
  '/* comment */ {}',
  'undefined',
  '\u0000',
  Buffer.from([0xff, 0xfe, 0x7b, 0x00, 0x7d, 0x00]),
  Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xc0, 0xaf, 0x22, 0x7d]),
];

const WELL_FORMED_NON_OBJECTS = ['null', '[]', '"text"', '1', 'true', '[{}]', '\ufeff{}', ' \n\t {} \n'];

const CONTENT_TYPES: [string, Expectation][] = [
  ['text/plain', { status: [415], code: ['unsupported_media_type'] }],
  ['application/x-www-form-urlencoded', { status: [415], code: ['unsupported_media_type'] }],
  ['multipart/form-data; boundary=x', { status: [415], code: ['unsupported_media_type'] }],
  ['application/xml', { status: [415], code: ['unsupported_media_type'] }],
  ['application/json; charset=utf-16', {}],
  ['application/json; charset=latin1', {}],
  ['APPLICATION/JSON', {}],
  ['application/jsonx', {}],
  ['application/vnd.api+json', {}],
  ['application/json;;;;', {}],
  ['application/json, text/plain', {}],
  [';', {}],
  ['x'.repeat(2000), {}],
];

const HEADER_JUNK: Record<string, string>[] = [
  { host: 'evil.example' },
  { host: 'a b' },
  { host: '[::1' },
  { host: '127.0.0.1:80@evil.example', 'x-forwarded-host': 'x'.repeat(2000) },
  { 'x-request-id': '../../<script>', 'accept-encoding': 'gzip;q=x, br, *' },
  { accept: 'application/xml;q=1, */*;q=0', origin: 'null' },
  { 'if-none-match': '*' },
  { 'if-none-match': ',,,W/', 'x-forwarded-for': 'not-an-ip, ::1, 999.1.1.1' },
  { 'if-none-match': 'x'.repeat(5000), 'x-forwarded-proto': 'javascript' },
];

const EXTRA_QUERY = [
  '__proto__=x',
  '__proto__[polluted]=1',
  'constructor[prototype][polluted]=1',
  'constructor=1',
  'hasOwnProperty=1',
  'toString=1',
  '%00=1',
  `${'k'.repeat(5000)}=1`,
  '&&&',
  '=',
  '=x',
  'a=%ZZ',
  ';',
  'limit',
  'a=1&a=2&a=3',
];

// ---------------------------------------------------------------------------------------------
// The abuse of one operation

async function abuseOperation(run: AbuseRun, op: Operation): Promise<void> {
  const { auth, res: baseline } = await discover(run, op);
  if (process.env.ABUSE_STATS) console.log(`${run.kind} ${op.id}: baseline as ${auth} → ${baseline.statusCode} ${baseline.body.slice(0, 120)}`);
  const fresh = () => baselineFor(run, op, auth);
  const authRequired = auth !== 'none';
  let b = await fresh();

  // Path parameters.
  const segmentOf = (value: Nasty) => ('raw' in value ? value.raw : encodeLoose(value.text));
  for (const p of op.pathParams) {
    for (const c of casesFor(p)) {
      const segment = segmentOf(c.value);
      await run.exercise(op, await requestFrom(run, b, (parts) => void (parts.path[p.name] = segment)), { echoed: [readable(c.value)], ...c.expect });
    }
    await fc.assert(
      fc.asyncProperty(textFor(p.schema).map((text) => segmentOf({ text })), async (segment) => {
        await run.exercise(op, await requestFrom(run, b, (parts) => void (parts.path[p.name] = segment)), { echoed: [segment] });
      }),
      PROPERTY_OPTIONS,
    );
  }

  // Query parameters: each documented one, repeated, as an array, and unknown ones.
  for (const p of op.queryParams) {
    const set = (value: string) => (parts: Parts) => {
      parts.query = parts.query.filter(([k]) => k !== p.name);
      parts.query.push([p.name, value]);
    };
    for (const c of casesFor(p)) {
      await run.exercise(op, await requestFrom(run, b, set(encoded(c.value))), { echoed: [readable(c.value)], ...c.expect });
    }
    await fc.assert(
      fc.asyncProperty(textFor(p.schema), async (value) => {
        await run.exercise(op, await requestFrom(run, b, set(encodeLoose(value))), { echoed: [value] });
      }),
      PROPERTY_OPTIONS,
    );
    const valid = encodeLoose(String((await hint(run, op, p.name)) ?? sampleFor(p.schema)));
    await run.exercise(op, await requestFrom(run, b, (parts) => parts.query.push([p.name, valid], [p.name, "'%20OR%201=1"])));
    await run.exercise(op, await requestFrom(run, b, (parts) => parts.query.push([`${p.name}[]`, valid], [`${p.name}[a]`, '1'])));
    await run.exercise(op, await requestFrom(run, b, (parts) => parts.query.push([p.name, null])));
  }
  for (const extra of EXTRA_QUERY) {
    await run.exercise(op, await requestFrom(run, b, (parts) => parts.query.push([extra, null])), { echoed: [extra] });
  }

  // The body: fields, missing fields, malformed JSON, content types, sizes.
  const takesBody = ['POST', 'PUT', 'PATCH', 'DELETE'].includes(op.method);
  if (op.body) {
    const props = op.body.properties ?? {};
    for (const [name, schema] of Object.entries(props)) {
      b = await fresh();
      const setField = (value: unknown) => (parts: Parts) => void ((parts.body as Record<string, unknown>)[name] = value);
      for (const c of fieldCases(name, schema)) {
        await run.exercise(op, await requestFrom(run, b, setField(c.value)), { echoed: typeof c.value === 'string' ? [c.value] : [], ...c.expect });
      }
      await fc.assert(
        fc.asyncProperty(jsonFor(schema), async (value) => {
          await run.exercise(op, await requestFrom(run, b, setField(value)), { echoed: typeof value === 'string' ? [value] : [] });
        }),
        PROPERTY_OPTIONS,
      );
      // The same key twice, the bad value first and last; a deeply nested value.
      const good = JSON.stringify((b.body as Record<string, unknown>)[name] ?? 'x');
      const rest = JSON.stringify(b.body).slice(1, -1);
      const raws = [
        `{"${name}":"' OR 1=1 --",${rest}}`,
        `{${rest},"${name}":${good},"${name}":{"$ne":null}}`,
        `{${rest},"${name}":${deeplyNested(10_000)}}`,
        `{${rest},"${name}":${deeplyNested(10_000, 'object')}}`,
      ];
      for (const payload of raws) await run.exercise(op, await requestFrom(run, b, (parts) => void (parts.payload = payload)));
    }
    b = await fresh();
    for (const name of op.body.required ?? []) {
      await run.exercise(op, await requestFrom(run, b, (parts) => void delete (parts.body as Record<string, unknown>)[name]), { refuse: true, status: [400] });
    }
  }
  if (takesBody) {
    b = await fresh();
    const documentedBody = op.body !== null;
    const json = (change: (parts: Parts) => void) => (parts: Parts) => {
      parts.headers['content-type'] = 'application/json';
      change(parts);
    };
    for (const payload of MALFORMED_JSON) {
      await run.exercise(op, await requestFrom(run, b, json((parts) => void (parts.payload = payload))), documentedBody ? { refuse: true, status: [400] } : {});
    }
    for (const payload of WELL_FORMED_NON_OBJECTS) {
      await run.exercise(op, await requestFrom(run, b, json((parts) => void (parts.payload = payload))));
    }
    const baseJson = b.body === undefined ? '{}' : JSON.stringify(b.body);
    const inner = baseJson.startsWith('{') && baseJson.length > 2 ? `,${baseJson.slice(1, -1)}` : '';
    const polluting = [
      `{"__proto__":{"polluted":true}${inner}}`,
      `{"constructor":{"prototype":{"polluted":true}}${inner}}`,
      `{"x":${'{"__proto__":'.repeat(2000)}{}${'}'.repeat(2000)}${inner}}`,
    ];
    for (const payload of polluting) await run.exercise(op, await requestFrom(run, b, json((parts) => void (parts.payload = payload))));
    for (const depth of [10_000, 100_000]) {
      await run.exercise(op, await requestFrom(run, b, json((parts) => void (parts.payload = deeplyNested(depth)))), documentedBody ? { refuse: true } : {});
      await run.exercise(op, await requestFrom(run, b, json((parts) => void (parts.payload = `{"x":${deeplyNested(depth, 'object')}${inner}}`))));
    }
    // Empty body with a JSON content type.
    await run.exercise(op, await requestFrom(run, b, json((parts) => void (parts.payload = ''))), documentedBody ? { status: [400], code: ['invalid_json'] } : {});
    // Over the configured limit, with a length and streamed without one.
    const limit = ROUTE_BODY_LIMITS[op.id]?.(run.t.ctx.config) ?? run.t.ctx.config.bodyLimitBytes;
    const huge = `{"padding":"${'x'.repeat(limit)}"${inner}}`;
    const tooLarge = { status: [413], code: ['payload_too_large'] };
    await run.exercise(op, await requestFrom(run, b, json((parts) => void (parts.payload = huge))), tooLarge);
    await run.exercise(op, await requestFrom(run, b, json((parts) => void (parts.payload = Readable.from([Buffer.from(huge)])))), tooLarge);
    // Lying about the length.
    await run.exercise(op, await requestFrom(run, b, json((parts) => void (parts.headers['content-length'] = String(baseJson.length + 100)))));
    await run.exercise(op, await requestFrom(run, b, json((parts) => void (parts.headers['content-length'] = '-1'))));
    // Content types.
    for (const [type, expectation] of CONTENT_TYPES) {
      await run.exercise(op, await requestFrom(run, b, (parts) => {
        parts.headers['content-type'] = type;
        parts.payload = baseJson;
      }), documentedBody ? expectation : {});
    }
    await run.exercise(op, await requestFrom(run, b, (parts) => {
      delete parts.headers['content-type'];
      parts.payload = baseJson;
    }));
  }

  // Forged, malformed, revoked and replayed credentials, in every channel.
  b = await fresh();
  const forgedToken = 'A'.repeat(43);
  const secret = run.key.slice(run.keyPrefix.length + 1);
  const forgeries: Record<string, string>[] = [
    {},
    { 'x-api-key': '' },
    { 'x-api-key': 'garbage' },
    { 'x-api-key': "' OR 1=1 --" },
    { 'x-api-key': `${run.keyPrefix}.${'x'.repeat(secret.length)}` },
    { 'x-api-key': `${run.key}x` },
    { 'x-api-key': run.key.slice(0, -1) },
    { 'x-api-key': `${run.keyPrefix}.` },
    { 'x-api-key': `.${secret}` },
    { 'x-api-key': run.keyPrefix },
    { 'x-api-key': run.key.toUpperCase() },
    { 'x-api-key': run.revokedKey },
    { 'x-api-key': 'k'.repeat(8000) },
    { 'x-api-key': 'ÿþ'.repeat(10) },
    { 'x-api-key': `${run.keyPrefix}%00.${secret}` },
    { authorization: 'Bearer' },
    { authorization: 'Bearer ' },
    { authorization: 'Bearer garbage' },
    { authorization: `Bearer ${forgedToken}` },
    { authorization: `Bearer ${run.signedOutToken}` },
    { authorization: `Bearer ${run.revokedKey}` },
    { authorization: `Basic ${Buffer.from(`${run.keyPrefix}:${secret}`).toString('base64')}` },
    { authorization: `Bearer ${'t'.repeat(8000)}` },
    { authorization: `Bearer ${run.signedOutToken}x` },
    { cookie: run.sessionCookie({ handle: 'alice-dev', expiresAt: Date.now() + day }, 'w'.repeat(32)) },
    { cookie: `stampgate_session=${Buffer.from(JSON.stringify({ handle: 'alice-dev', expiresAt: Date.now() + day })).toString('base64url')}` },
    { cookie: run.sessionCookie({ handle: 'alice-dev', expiresAt: Date.now() - 1000 }) },
    { cookie: run.sessionCookie('not json') },
    { cookie: run.sessionCookie({ handle: ['alice-dev'], expiresAt: '9999999999999' }) },
    { cookie: `${run.grantsCookie}x` },
    { cookie: 'stampgate_session=' },
    { cookie: 'stampgate_session=%00' },
    { cookie: `stampgate_session=${'c'.repeat(8000)}` },
    { cookie: ';;;=;stampgate_session;=' },
    { cookie: `stampgate_portal=${'A'.repeat(43)}` },
    { cookie: 'stampgate_portal=%00', 'x-csrf-token': 'x', origin: 'http://localhost' },
    { cookie: `stampgate_portal=${'p'.repeat(8000)}` },
  ];
  if (auth !== 'apiKey') forgeries.push({ authorization: `Bearer ${run.key}` }, { 'x-api-key': run.key });
  if (auth !== 'walletSession') forgeries.push({ authorization: `Bearer ${(await run.authHeaders('walletSession')).authorization!.slice(7)}` });
  if (auth !== 'grantsSession') forgeries.push({ cookie: run.grantsCookie });
  // A route without authentication only has to survive odd credentials: every third one will do.
  for (const headers of authRequired ? forgeries : forgeries.filter((_, i) => i % 3 === 0)) {
    const request = await requestFrom(run, b, (parts) => {
      const type = parts.headers['content-type'];
      parts.headers = { ...headers, ...(type ? { 'content-type': type } : {}) };
    });
    await run.exercise(op, request, authRequired ? { refuse: true, status: [401], code: AUTH_CODES } : {});
  }

  // Odd headers with valid credentials.
  for (const headers of HEADER_JUNK) {
    await run.exercise(op, await requestFrom(run, b, (parts) => void Object.assign(parts.headers, headers)));
  }
}

// ---------------------------------------------------------------------------------------------

describe.each(databaseKinds)('abuse of every documented operation on %s', (kind) => {
  const run = new AbuseRun(kind);

  beforeAll(async () => run.setUp(), 120_000);
  afterAll(async () => run.close());

  it('documents every served route, and covers every operation the document lists', async () => {
    const doc = (await run.app.inject('/openapi.json')).json() as OpenApiDocument;
    const operations = listOperations(doc);
    expect(operations.length).toBeGreaterThan(0);
    expect(operations.map((o) => o.id).sort()).toEqual(documented.operations.map((o) => o.id).sort());
    const ids = new Set(operations.map((o) => o.id));
    const undocumented = servedRoutes(run.app)
      .filter((r) => !UNDOCUMENTED.some((pattern) => pattern.test(r.path)))
      .flatMap((r) => r.methods.filter((m) => HTTP_METHODS.includes(m as never)).map((m) => r.paths.map((path) => `${m} ${path}`)))
      // A shared parameter node is read as any of its names: one of the readings must be documented.
      .filter((readings) => !readings.some((id) => ids.has(id)))
      .map((readings) => readings.join(' or '));
    expect(undocumented).toEqual([]);
  }, 120_000);

  for (const op of documented.operations) {
    it(`${op.id} refuses bad input with the standard error and an unchanged database`, async () => {
      const [before, started] = [run.requests, Date.now()];
      await abuseOperation(run, op);
      if (process.env.ABUSE_STATS) console.log(`${kind} ${op.id}: ${run.requests - before} requests in ${Date.now() - started} ms`);
    }, 180_000);
  }

  it('answers methods a path does not have with the standard 404/405', async () => {
    const paths = [...new Set(documented.operations.map((o) => o.path))];
    for (const path of paths) {
      const op = documented.operations.find((o) => o.path === path)!;
      const b = await baselineFor(run, op, 'apiKey');
      const have = documented.operations.filter((o) => o.path === path).map((o) => o.method);
      for (const method of HTTP_METHODS.filter((m) => !have.includes(m))) {
        const request = await requestFrom(run, { ...b, op: { ...op, method } });
        await run.exercise(null, request, { refuse: true, status: [404, 405], echoed: [request.url] });
      }
    }
  }, 120_000);

  describe('signatures on POST /registry/submit-passport (scorer requires one)', () => {
    const submit = (body: Record<string, unknown>) => ({
      method: 'POST',
      url: '/registry/submit-passport',
      headers: { 'x-api-key': run.key, 'content-type': 'application/json' },
      payload: JSON.stringify(body),
    });
    const op = () => documented.operations.find((o) => o.id === 'POST /registry/submit-passport') ?? null;
    const nonce = async () => {
      const signingMessage = documented.operations.find((o) => o.id === 'GET /registry/signing-message') ?? null;
      const res = await run.exercise(signingMessage, { method: 'GET', url: '/registry/signing-message', headers: { 'x-api-key': run.key } });
      return (JSON.parse(res.body) as { nonce: string }).nonce;
    };
    const sign = (wallet: Wallet, n: string) => wallet.account.signMessage({ message: signingMessageFor(n) });
    const refused = (code: string): Expectation => ({ refuse: true, status: [400], code: [code] });

    it('refuses missing, forged, malformed, misdirected, expired and replayed signatures, changing nothing', async () => {
      const { alice, bob } = run;
      const scorer_id = String(run.signedScorerId);
      const n = await nonce();
      const good = await sign(alice, n);

      await run.exercise(op(), submit({ address: alice.address, scorer_id }), refused('invalid_signature'));
      await run.exercise(op(), submit({ address: alice.address, scorer_id, signature: good }), refused('invalid_nonce'));
      await run.exercise(op(), submit({ address: alice.address, scorer_id, signature: '', nonce: n }), refused('invalid_signature'));
      // Another wallet's signature over the right message.
      await run.exercise(op(), submit({ address: alice.address, scorer_id, signature: await sign(bob, n), nonce: n }), refused('invalid_signature'));
      // The right wallet's signature over another nonce's message.
      const other = await nonce();
      await run.exercise(op(), submit({ address: alice.address, scorer_id, signature: await sign(alice, other), nonce: n }), refused('invalid_signature'));
      // A signature of a different text.
      const otherText = await alice.account.signMessage({ message: `${signingMessageFor(n)}\n` });
      await run.exercise(op(), submit({ address: alice.address, scorer_id, signature: otherText, nonce: n }), refused('invalid_signature'));
      for (const signature of MALFORMED_SIGNATURES) {
        await run.exercise(op(), submit({ address: alice.address, scorer_id, signature, nonce: n }), refused('invalid_signature'));
      }
      for (const badNonce of [n.toUpperCase(), `${n}\u0000`, ` ${n}`, n.slice(1), `${n}0`, 'f'.repeat(64), "' OR 1=1 --", '\ud800'.repeat(64)]) {
        await run.exercise(op(), submit({ address: alice.address, scorer_id, signature: good, nonce: badNonce }), { ...refused('invalid_nonce'), echoed: [badNonce] });
      }
      await fc.assert(
        fc.asyncProperty(fc.stringMatching(/^0x[0-9a-fA-F]{0,140}$/), async (signature) => {
          await run.exercise(op(), submit({ address: alice.address, scorer_id, signature, nonce: n }), refused('invalid_signature'));
        }),
        PROPERTY_OPTIONS,
      );
      await fc.assert(
        fc.asyncProperty(fc.oneof(fc.stringMatching(/^[0-9a-f]{64}$/), fc.string({ unit: 'binary', maxLength: 200 })), async (badNonce) => {
          fc.pre(badNonce !== n && badNonce !== other);
          await run.exercise(op(), submit({ address: alice.address, scorer_id, signature: good, nonce: badNonce }), { ...refused('invalid_nonce'), echoed: [badNonce] });
        }),
        PROPERTY_OPTIONS,
      );
      // A signature on a scorer that does not require one is still checked.
      await run.exercise(op(), submit({ address: alice.address, scorer_id: String(run.scorerId), signature: await sign(bob, n), nonce: n }), refused('invalid_signature'));

      // After all that, the nonce is still usable, once.
      await run.exercise(op(), submit({ address: alice.address, scorer_id, signature: good, nonce: n }), { status: [200] });
      await run.exercise(op(), submit({ address: alice.address, scorer_id, signature: good, nonce: n }), refused('invalid_nonce'));
      await run.exercise(op(), submit({ address: bob.address, scorer_id, signature: await sign(bob, n), nonce: n }), refused('invalid_nonce'));

      // An expired nonce.
      const stale = await nonce();
      await run.db.updateTable('nonces').set({ expires_at: Date.now() - 1000 }).where('nonce', '=', stale).execute();
      await run.resync();
      await run.exercise(op(), submit({ address: alice.address, scorer_id, signature: await sign(alice, stale), nonce: stale }), refused('invalid_nonce'));
    }, 120_000);

    it('never fails on variants of a genuine signature (high s, v as 0/1, compact)', async () => {
      const { alice } = run;
      const secp256k1n = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
      for (const variant of ['high-s', 'v01', 'compact'] as const) {
        const n = await nonce();
        const genuine = await sign(alice, n);
        const r = genuine.slice(2, 66);
        const s = BigInt(`0x${genuine.slice(66, 130)}`);
        const v = parseInt(genuine.slice(130, 132), 16);
        let signature: string;
        if (variant === 'high-s') signature = `0x${r}${(secp256k1n - s).toString(16).padStart(64, '0')}${(v === 27 ? 28 : 27).toString(16)}`;
        else if (variant === 'v01') signature = `0x${r}${genuine.slice(66, 130)}0${v - 27}`;
        else signature = `0x${r}${(s | (BigInt(v - 27) << 255n)).toString(16).padStart(64, '0')}`;
        await run.exercise(op(), submit({ address: alice.address, scorer_id: String(run.signedScorerId), signature, nonce: n }));
      }
    }, 120_000);
  });

  describe('wallet sign-in and session tokens', () => {
    const op = () => documented.operations.find((o) => o.id === 'POST /registry/wallet/session') ?? null;
    const post = (body: unknown) => ({
      method: 'POST',
      url: '/registry/wallet/session',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify(body),
    });
    const refused = (code: string): Expectation => ({ refuse: true, status: [400], code: [code] });
    const garbageMessage = fc.oneof(
      fc.string({ unit: 'binary', minLength: 1, maxLength: 300 }),
      fc.constantFrom(...NASTY_STRINGS.filter((s) => s.length > 0 && s.length <= 8192)),
    );

    it('refuses forged, tampered, foreign, expired and replayed sign-in messages, changing nothing', async () => {
      const { alice, bob } = run;
      const wallet = testWallet(4200);
      const message = await run.siweMessage(wallet);
      await run.resync();
      const good = await wallet.account.signMessage({ message });
      await run.exercise(op(), post({ message, signature: await bob.account.signMessage({ message }) }), refused('invalid_signature'));
      await run.exercise(op(), post({ message: message.replace('Version: 1', 'Version: 1 '), signature: good }), { refuse: true, status: [400] });
      await run.exercise(op(), post({ message: message.replace(/Sign in to[^\n]*/, 'Give me everything.'), signature: good }), refused('invalid_signature'));
      const otherMessage = await run.siweMessage(wallet);
      await run.resync();
      await run.exercise(op(), post({ message, signature: await wallet.account.signMessage({ message: otherMessage }) }), refused('invalid_signature'));
      for (const signature of MALFORMED_SIGNATURES) await run.exercise(op(), post({ message, signature }), { refuse: true, status: [400] });
      const foreignFields = [
        { domain: 'evil.example' },
        { uri: 'https://evil.example/' },
        { issuedAt: new Date(Date.now() - 2 * day), expirationTime: new Date(Date.now() - day) },
      ];
      for (const overrides of foreignFields) {
        const foreign = await run.siweMessage(wallet, overrides);
        await run.resync();
        await run.exercise(op(), post({ message: foreign, signature: await wallet.account.signMessage({ message: foreign }) }), refused('invalid_siwe_message'));
      }
      await fc.assert(
        fc.asyncProperty(garbageMessage, async (garbage) => {
          await run.exercise(op(), post({ message: garbage, signature: good }), { refuse: true, status: [400], echoed: [garbage] });
        }),
        PROPERTY_OPTIONS,
      );
      // The genuine message still works, once; its token then works and the message cannot be replayed.
      const res = await run.exercise(op(), post({ message, signature: good }), { status: [200] });
      const token = (JSON.parse(res.body) as { token: string }).token;
      await run.exercise(op(), post({ message, signature: good }), refused('invalid_nonce'));
      await run.exercise(null, { method: 'GET', url: '/registry/wallet/stamps', headers: { authorization: `Bearer ${token}` } }, { status: [200] });
      // Signed out, the token is dead everywhere.
      await run.exercise(null, { method: 'DELETE', url: '/registry/wallet/session', headers: { authorization: `Bearer ${token}` } }, { status: [204] });
      const sessionRoutes = documented.operations.filter(
        (x) => x.path.startsWith('/registry/wallet/') && x.id !== 'GET /registry/wallet/siwe-nonce' && x.id !== 'POST /registry/wallet/session',
      );
      for (const o of sessionRoutes) {
        const b = await baselineFor(run, o, 'walletSession');
        const request = await requestFrom(run, b, (parts) => void (parts.headers.authorization = `Bearer ${token}`));
        await run.exercise(o, request, { refuse: true, status: [401], code: ['invalid_session'] });
      }
      // An expired session's token is dead too.
      const expiring = await run.signIn(alice);
      await run.db.updateTable('wallet_sessions').set({ expires_at: Date.now() - 1000 }).where('address', '=', alice.address).execute();
      await run.resync();
      await run.exercise(
        null,
        { method: 'GET', url: '/registry/wallet/stamps', headers: { authorization: `Bearer ${expiring}` } },
        { refuse: true, status: [401], code: ['invalid_session'] },
      );
    }, 120_000);
  });

  describe('grant exports', () => {
    it('refuses forged export credentials and foreign grants, changing nothing', async () => {
      const op = documented.operations.find((o) => o.id === 'GET /grants/v1/api/export_addresses/{file}') ?? null;
      const res = await run.exercise(op, { method: 'GET', url: '/grants/v1/api/export_addresses/grant2.json', headers: { cookie: run.grantsCookie } }, { status: [200] });
      expect(res.statusCode).toBe(200);
      // Credentials come from a login or a rotation (POST), never from an export GET.
      const rotated = await send(run.app, {
        method: 'POST',
        url: '/grants/export-credentials',
        headers: { cookie: run.grantsCookie, origin: 'http://localhost' },
        remoteAddress: run.nextIp(),
      });
      expect(rotated.statusCode).toBe(200);
      await run.resync();
      const { _key: key, _secret: secret } = (JSON.parse(rotated.body) as { api_key: { _key: string; _secret: string } }).api_key;
      const url = (file: string, k: string | null, s: string | null) =>
        `/grants/v1/api/export_addresses/${file}?${[k === null ? '' : `_key=${encodeLoose(k)}`, s === null ? '' : `_secret=${encodeLoose(s)}`].filter(Boolean).join('&')}`;
      // The genuine pair works on a grant of the caller.
      await run.exercise(op, { method: 'GET', url: url('grant1.json', key, secret) }, { status: [200] });
      const forged: [string | null, string | null][] = [
        [key, null],
        [null, secret],
        [key, ''],
        ['', secret],
        [key, `${secret}x`],
        [key, secret!.slice(1)],
        [key, secret!.toUpperCase()],
        [`${key}x`, secret],
        ["' OR 1=1 --", "' OR 1=1 --"],
        [key, "' OR '1'='1"],
        ['\u0000', '\u0000'],
        [key, '\ud800'],
      ];
      for (const [k, s] of forged) {
        await run.exercise(op, { method: 'GET', url: url('grant1.json', k, s) }, { refuse: true, status: [401], code: ['not_authenticated'], echoed: [k ?? '', s ?? ''] });
      }
      await fc.assert(
        fc.asyncProperty(fc.string({ unit: 'binary', maxLength: 60 }), fc.string({ unit: 'binary', maxLength: 60 }), async (k, s) => {
          fc.pre(k !== key || s !== secret);
          await run.exercise(op, { method: 'GET', url: url('grant1.json', k, s) }, { refuse: true, status: [401], code: ['not_authenticated'], echoed: [k, s] });
        }),
        PROPERTY_OPTIONS,
      );
      // The genuine pair on a grant its owner is not on the team of.
      await run.exercise(op, { method: 'GET', url: url('grant3.json', key, secret) }, { refuse: true, status: [403], code: ['not_team_member'] });
      // A session for a handle without a profile, and a team member on someone else's grant.
      const notMember: Expectation = { refuse: true, status: [403], code: ['not_team_member'] };
      const stranger = run.sessionCookie({ handle: 'nobody-here', profileId: null, expiresAt: Date.now() + day });
      await run.exercise(op, { method: 'GET', url: '/grants/v1/api/export_addresses/grant1.json', headers: { cookie: stranger } }, notMember);
      await run.exercise(op, { method: 'GET', url: '/grants/v1/api/export_addresses/grant3.json', headers: { cookie: run.grantsCookie } }, notMember);
    }, 120_000);
  });
  // Runs last: every request above was timed. The issue's bar is 50 ms of CPU per request; the
  // figure includes the other threads of this process (GC, the database driver), hence the margin
  // a loaded machine may need (ABUSE_CPU_BUDGET_MS).
  it('spent no more than the CPU budget on any request', async () => {
    const worst = run.cpu.worst();
    console.log(`${kind}: ${run.cpu.count} requests timed; most CPU:\n${worst.map((w) => `  ${w.ms.toFixed(1)} ms  ${w.id}  ${w.request}`).join('\n')}`);
    expect(run.cpu.count).toBeGreaterThan(1000);
    // An outlier is sent again: only a request that costs too much every time fails.
    const over = await run.cpu.confirmedOver(CPU_BUDGET_MS, (request) => send(run.app, request));
    expect(over.map((w) => `${w.ms.toFixed(1)} ms ${w.request}`)).toEqual([]);
  });
});
