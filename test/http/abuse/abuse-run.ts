/**
 * What every abuse test file shares: the settings of the app under abuse, the operations of its
 * OpenAPI document, and AbuseRun, which sends each request with the right credentials and checks
 * what every answer must satisfy (no 500, no hang, a refusal changes nothing, a GET writes only
 * what WRITING_GETS allows), timing each one for the CPU-budget check that ends every file.
 */
import cookiePlugin from '@fastify/cookie';
import { createSiweMessage } from 'viem/siwe';
import { expect, it } from 'vitest';
import { type AppContext, createAppContext } from '../../../src/app/container.js';
import { loadConfig } from '../../../src/config/index.js';
import { buildServer } from '../../../src/app/server.js';
import { CpuCosts } from '../../helpers/abuse/cpu-costs.js';
import { DatabaseWatch } from '../../helpers/abuse/database-watch.js';
import { listOperations, type OpenApiDocument, type Operation } from '../../helpers/abuse/openapi.js';
import { type AbuseRequest, type AbuseResponse, codeOf, describeRequest, refusalProblems, send } from '../../helpers/abuse/requests.js';
import { createTestApp, seedAccount, type TestApp } from '../../helpers/app.js';
import type { DatabaseKind } from '../../helpers/databases.js';
import { giveStamps, testWallet } from '../../helpers/stamps.js';

/** fast-check runs per input (ABUSE_RUNS=150 for a deeper local run); the fixed tables come on top. */
const RUNS = Number(process.env.ABUSE_RUNS ?? 25);
// A failure is reported at once, unshrunk: each run is a request, and the request is in the message.
export const PROPERTY_OPTIONS = { numRuns: RUNS, endOnFailure: true };
export const day = 86_400_000;
/** CPU time any one request may cost (ABUSE_CPU_BUDGET_MS to loosen on a loaded machine). */
const CPU_BUDGET_MS = Number(process.env.ABUSE_CPU_BUDGET_MS ?? 50);

// GET operations that legitimately write when they succeed (the only writes a GET may make).
const WRITING_GETS: Record<string, string[]> = {
  'GET /registry/signing-message': ['nonces'],
  'GET /registry/wallet/siwe-nonce': ['wallet_siwe_nonces'],
  'GET /v2/account/siwe-nonce': ['portal_siwe_nonces'],
  'GET /grants/v1/api/export_addresses/{file}': ['export_credentials'],
  'GET /grants/v1/api/export_info/{file}': ['export_credentials'],
  // v2 scores now and records the result as a v1 submission would (v2.md); score_counts follows
  // scores through its triggers.
  'GET /v2/stamps/{scorer_id}/score/{address}': [
    'scores',
    'score_counts',
    'score_events',
    'nullifier_holds',
    'webhook_outbox',
  ],
};

// Operations with a body limit of their own instead of BODY_LIMIT_BYTES.
export const ROUTE_BODY_LIMITS: Record<string, (config: AppContext['config']) => number> = {
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

/** The operations, read once from a throw-away app: the tests are generated from them. */
export async function readDocumentedOperations(): Promise<{ operations: Operation[] }> {
  const t = await createTestApp('sqlite', abuseEnv());
  try {
    const doc = (await t.app.inject('/openapi.json')).json() as OpenApiDocument;
    return { operations: listOperations(doc) };
  } finally {
    await t.close();
  }
}

export type AuthKind = 'none' | 'apiKey' | 'walletSession' | 'grantsSession' | 'portalSession';
export const AUTH_KINDS: AuthKind[] = ['none', 'apiKey', 'walletSession', 'grantsSession', 'portalSession'];
export const AUTH_CODES = ['missing_api_key', 'invalid_api_key', 'invalid_session', 'not_authenticated'];

export type Wallet = ReturnType<typeof testWallet>;

export interface Expectation {
  /** The request must not succeed. */
  refuse?: boolean;
  status?: number[];
  code?: string[];
  /** The caller's own inputs, which a detail may quote back. */
  echoed?: string[];
}

/** Everything one database's run needs. */
export class AbuseRun {
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

  /** Another app on the same database and data folder, as a second process would be: no cache of the first is warm in it. */
  async freshApp(): Promise<{ send(request: AbuseRequest): Promise<AbuseResponse>; close(): Promise<void> }> {
    const config = loadConfig({ STAMPGATE_ENV: 'development', API_KEY_CACHE_TTL_MS: '0', ...abuseEnv(), DATA_DIR: this.t.ctx.config.dataDir, DATABASE_URL: this.t.test.url });
    const ctx = await createAppContext(config, this.t.test.open(), { http: true });
    const app = await buildServer(ctx, { logger: false });
    await app.ready();
    return {
      send: (request) => send(app, request),
      close: async () => {
        await app.close();
        await ctx.close();
      },
    };
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

/**
 * Registers the last test of a file: every request of `run` above was timed. The issue's bar is
 * 50 ms of CPU per request; the figure includes the other threads of this process (GC, the
 * database driver), hence the margin a loaded machine may need (ABUSE_CPU_BUDGET_MS).
 */
export function itSpentNoMoreThanTheCpuBudget(kind: DatabaseKind, run: AbuseRun, minRequests: number): void {
  it('spent no more than the CPU budget on any request', async () => {
    const worst = run.cpu.worst();
    console.log(`${kind}: ${run.cpu.count} requests timed; most CPU:\n${worst.map((w) => `  ${w.ms.toFixed(1)} ms${w.fullGcMs > 0 ? ` (${w.fullGcMs.toFixed(1)} ms in full GC)` : ''}  ${w.id}  ${w.request}`).join('\n')}`);
    expect(run.cpu.count).toBeGreaterThan(minRequests);
    // A refused outlier is sent again to fresh apps: only a request that costs too much every time fails.
    const over = await run.cpu.confirmedOver(CPU_BUDGET_MS, () => run.freshApp());
    expect(over.map((w) => `${w.ms.toFixed(1)} ms ${w.request}`)).toEqual([]);
  });
}
