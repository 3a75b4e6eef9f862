import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { typed } from '../../../http/typebox.js';
import type { Config } from '../../../config/index.js';
import { AppError } from '../../../errors.js';
import { errorResponses } from '../../../http/errors.js';
import { type BudgetCounters, registerRateLimit } from '../../../http/rate-limit.js';
import type { TrustedIssuerService } from '../../stamps/issuers.service.js';
import type { WalletServices } from '../wallet.module.js';
import { Deleted, SignInBody, SiweNonce, WalletSessionBody, WalletStamps, WriteReport, stampBodies } from '../wallet.schema.js';
import { type SiweSite, siweSite } from '../../../sessions/siwe-checks.js';
import type { WalletSession } from '../wallet-sessions.service.js';
import { clientAddressKey } from '../../../http/client-address.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The wallet session of a valid `Authorization: Bearer <token>`, else null. */
    walletSession?: WalletSession | null;
  }
}

/** Requests per rate-limit window from one IP address without a valid session (nonces, sign-ins, bad tokens). */
export const WALLET_IP_BUDGET = 200;
/** Requests per rate-limit window of one signed-in address, across all its sessions. */
export const WALLET_ADDRESS_BUDGET = 300;

const open: Record<string, string[]>[] = [];
/** OpenAPI security of the session routes (the scheme is declared in src/http/openapi.ts). */
const sessionSecurity = { security: [{ walletSession: [] }] };
const bearerNote = ' Needs `Authorization: Bearer <session token>` from POST /registry/wallet/session (no API key).';

function bearerToken(request: FastifyRequest): string | undefined {
  const authorization = request.headers.authorization;
  if (typeof authorization !== 'string' || !/^bearer\s+/i.test(authorization)) return undefined;
  return authorization.replace(/^bearer\s+/i, '').trim();
}

function requireSession(request: FastifyRequest): WalletSession {
  if (request.walletSession) return request.walletSession;
  if (bearerToken(request) === undefined) {
    throw new AppError('invalid_session', 'Sign in with POST /registry/wallet/session and send its token as "Authorization: Bearer <token>".');
  }
  throw new AppError('invalid_session', 'The session token is unknown or expired; sign in again.');
}

/** Route hook: refuses requests without a live session before their body is read. */
async function sessionRequired(request: FastifyRequest): Promise<void> {
  requireSession(request);
}

const writeNote =
  'Every credential is verified (proof, trusted issuer, unexpired, subject = the signed-in address); ' +
  'the response reports each one by index. A session can only ever write the stamps of its own address.';

/** What the wallet routes use. */
export interface WalletRouteDeps {
  wallet: Pick<WalletServices, 'sessions' | 'stamps'>;
  issuers: Pick<TrustedIssuerService, 'current'>;
  config: Pick<Config, 'rateLimitWindowMs' | 'publicBaseUrl' | 'maxStampsPerRequest' | 'walletBodyLimitBytes' | 'bodyLimitBytes'>;
  counters: BudgetCounters;
}

/**
 * Wallet-side stamp writing, for end users (typically a browser dApp): no API key. A wallet
 * signs in with an EIP-4361 message and gets a short-lived session token; with it, it adds,
 * replaces and deletes its own stamps. Rate-limited per IP before sign-in and per address after.
 */
export async function walletRoutes(instance: FastifyInstance, deps: WalletRouteDeps): Promise<void> {
  const app = typed(instance);
  const { wallet } = deps;
  const windowMs = deps.config.rateLimitWindowMs;
  const siteOf = (request: FastifyRequest): SiweSite =>
    siweSite(deps.config.publicBaseUrl ?? `${request.protocol}://${request.host}`);
  const bodies = stampBodies(deps.config.maxStampsPerRequest);
  // Refused while the body streams in, before it is parsed: 100 real stamps take about 250 KB.
  const bodyLimit = Math.min(deps.config.walletBodyLimitBytes, deps.config.bodyLimitBytes);


  app.addHook('onRequest', async (request) => {
    request.walletSession = await wallet.sessions.resolve(bearerToken(request));
  });
  // Route-level onRequest: after the session is resolved, before the session is required and
  // before the body is read, so refused and malformed requests spend budget too. Shared by every
  // process through Redis when REDIS_URL is set, like the API-key budgets.
  await registerRateLimit(app, {
    windowMs,
    key: (request) => (request.walletSession ? `wallet-address:${request.walletSession.address}` : `wallet-ip:${clientAddressKey(request.ip)}`),
    max: (request) => (request.walletSession ? WALLET_ADDRESS_BUDGET : WALLET_IP_BUDGET),
    message: (limit, retryIn) => `Rate limit of ${limit} requests per ${Math.round(windowMs / 60000)} minutes exceeded; retry in ${retryIn}.`,
    redis: deps.counters.redis,
    redisWatch: deps.counters.redisWatch,
    onRejected: () => deps.counters.onRejected?.('wallet'),
  });

  app.get(
    '/registry/wallet/siwe-nonce',
    {
      schema: {
        tags: ['wallet'],
        summary: 'A nonce and the fields of a Sign-In with Ethereum message',
        description:
          'Build an EIP-4361 message with these fields, the wallet\'s address, Version 1, Issued At (now) and an ' +
          'Expiration Time (required), have the wallet sign it with personal_sign, and send both to POST /registry/wallet/session. ' +
          'The nonce is single-use and expires at `expiresAt`. No API key.',
        security: open,
        response: { 200: SiweNonce, ...errorResponses(400, 429) },
      },
    },
    async (request) => wallet.sessions.issueNonce(siteOf(request)),
  );

  app.post(
    '/registry/wallet/session',
    {
      bodyLimit,
      schema: {
        tags: ['wallet'],
        summary: 'Sign in with Ethereum: a signed EIP-4361 message for a session token',
        description:
          'The message\'s domain must be this service\'s host exactly as GET /registry/wallet/siwe-nonce gives it (byte for byte), and its URI ' +
          'must start with this service\'s origin (no user information); it needs an unused nonce from ' +
          'GET /registry/wallet/siwe-nonce, an Issued At not in the future and an Expiration Time not past (Not Before is respected; ' +
          '5 minutes of clock skew are allowed on Issued At and Not Before; dates must be real calendar dates); a Chain ID of SIWE_ALLOWED_CHAIN_IDS. The signature must recover to the ' +
          'message\'s address: an EOA signature, or with SMART_WALLET_RPC_URL set a contract wallet\'s (ERC-1271 deployed, ERC-6492 ' +
          'not yet deployed), whose message must then name the Chain ID of that endpoint. Refusals: `invalid_siwe_message`, `invalid_nonce`, ' +
          '`invalid_signature`; 502 `upstream_unavailable` when the endpoint fails or is too slow. A refused sign-in consumes nothing. The token is shown once and lasts WALLET_SESSION_TTL_SECONDS.',
        security: open,
        body: SignInBody,
        response: { 200: WalletSessionBody, ...errorResponses(400, 413, 415, 429, 502) },
      },
    },
    async (request) => wallet.sessions.signIn(request.body, siteOf(request)),
  );

  app.delete(
    '/registry/wallet/session',
    {
      preParsing: sessionRequired,
      schema: {
        tags: ['wallet'],
        summary: 'Sign out: end this session',
        description: `The token stops working at once.${bearerNote}`,
        ...sessionSecurity,
        response: { 204: Type.Null({ description: 'The session has ended.' }), ...errorResponses(401, 429) },
      },
    },
    async (request, reply) => {
      requireSession(request);
      await wallet.sessions.signOut(bearerToken(request) as string);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/registry/wallet/stamps',
    {
      preParsing: sessionRequired,
      schema: {
        tags: ['wallet'],
        summary: 'The signed-in wallet\'s live stamps, newest first',
        description: `Deleted and revoked stamps are not listed.${bearerNote}`,
        ...sessionSecurity,
        response: { 200: WalletStamps, ...errorResponses(401, 429) },
      },
    },
    async (request) => {
      const { address } = requireSession(request);
      return { address, items: await wallet.stamps.list(address) };
    },
  );

  app.post(
    '/registry/wallet/stamps',
    {
      preParsing: sessionRequired,
      bodyLimit,
      schema: {
        tags: ['wallet'],
        summary: 'Add stamps to the signed-in wallet',
        description: `${writeNote} Good credentials are stored even when others are rejected. Re-adding a deleted stamp restores it.${bearerNote}`,
        ...sessionSecurity,
        body: bodies.add,
        response: { 200: WriteReport, ...errorResponses(400, 401, 413, 415, 429) },
      },
    },
    async (request) => {
      const { address } = requireSession(request);
      return wallet.stamps.add(address, request.body.credentials, await deps.issuers.current());
    },
  );

  app.put(
    '/registry/wallet/stamps',
    {
      preParsing: sessionRequired,
      bodyLimit,
      schema: {
        tags: ['wallet'],
        summary: 'Replace all stamps of the signed-in wallet',
        description:
          `${writeNote} Afterwards the wallet's live stamps are exactly the accepted credentials of this request: every other ` +
          'live stamp is soft-deleted (an empty list deletes every stamp). If any credential is rejected, nothing is deleted: the ' +
          'accepted ones are stored as with POST and `deleted` is 0, so a mistaken request never empties the wallet. Deleted stamps ' +
          `stop counting at the next scoring; their nullifiers stay held until they expire.${bearerNote}`,
        ...sessionSecurity,
        body: bodies.replace,
        response: { 200: WriteReport, ...errorResponses(400, 401, 413, 415, 429) },
      },
    },
    async (request) => {
      const { address } = requireSession(request);
      return wallet.stamps.replace(address, request.body.credentials, await deps.issuers.current(), 'all');
    },
  );

  app.patch<{ Body: { credentials: unknown[] } }>(
    '/registry/wallet/stamps',
    {
      preParsing: sessionRequired,
      bodyLimit,
      schema: {
        tags: ['wallet'],
        summary: 'Replace the signed-in wallet\'s stamps provider by provider',
        description:
          `${writeNote} For each provider with an accepted credential in this request, the wallet's other live stamps of that ` +
          `provider are soft-deleted; stamps of other providers, and of providers whose credentials were all rejected, stay.${bearerNote}`,
        ...sessionSecurity,
        body: bodies.add,
        response: { 200: WriteReport, ...errorResponses(400, 401, 413, 415, 429) },
      },
    },
    async (request) => {
      const { address } = requireSession(request);
      return wallet.stamps.replace(address, request.body.credentials, await deps.issuers.current(), 'providers');
    },
  );

  app.delete(
    '/registry/wallet/stamps',
    {
      preParsing: sessionRequired,
      bodyLimit,
      schema: {
        tags: ['wallet'],
        summary: 'Delete the signed-in wallet\'s stamps of some providers',
        description:
          'Soft delete: the stamps stop counting at the next scoring, but their nullifiers stay held until they expire, ' +
          `so deleting a stamp and presenting it from another address gains nothing. Re-adding a deleted stamp restores it.${bearerNote}`,
        ...sessionSecurity,
        body: bodies.providers,
        response: { 200: Deleted, ...errorResponses(400, 401, 413, 415, 429) },
      },
    },
    async (request) => {
      const { address } = requireSession(request);
      return wallet.stamps.remove(address, request.body.providers);
    },
  );
}
