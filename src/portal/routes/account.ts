import type { FastifyInstance, FastifyRequest } from 'fastify';
import { errorResponses } from '../../http/errors.js';
import { typed } from '../../http/typebox.js';
import { requirePermission } from '../../scoring/accounts/api-key-auth.js';
import type { Account, Scorer } from '../../scoring/accounts/accounts.service.js';
import type { ApiKey } from '../../scoring/accounts/api-keys.service.js';
import { type ApiKeyScopeDeps, registerApiKeyScope } from '../../scoring/accounts/key-rate-limit.js';
import type { AccountPortalService } from '../account-portal.service.js';
import { scorerTypeNames, scorerTypeOf } from '../../scoring/scorers/registry.js';
import { formatScoringTimestamp } from '../../scoring/timestamps.js';
import {
  AccountBody, CreatedKey, KeyBody, KeyList, KeyParams, NewKey, NewScorer, ScorerBody, ScorerChanges, ScorerList, ScorerParams, ScorerTypes, Usage, UsageQuery,
} from '../account.schema.js';

/** Either way in: the portal's session cookie (+ CSRF on changes) or an API key. */
const security: Record<string, string[]>[] = [{ portalSession: [] }, { apiKey: [] }];
const who = ' Authenticated by the portal session cookie (state changes also need `X-CSRF-Token`) or by an API key with `create_scorers`.';

const accountJson = (account: Account) => ({
  id: String(account.id),
  name: account.name,
  owner_address: account.ownerAddress,
  created_at: formatScoringTimestamp(account.createdAt.getTime()),
});

const scorerJson = (scorer: Scorer) => ({
  id: String(scorer.id),
  name: scorer.name,
  type: scorer.type,
  threshold: scorer.threshold,
  weights: scorer.weights,
  settings: scorer.settings,
  requires_signature: scorer.requiresSignature,
  created_at: formatScoringTimestamp(scorer.createdAt.getTime()),
  updated_at: formatScoringTimestamp(scorer.updatedAt.getTime()),
});

const keyJson = (key: ApiKey) => ({
  prefix: key.prefix,
  name: key.name,
  tier: key.tier,
  permissions: [...key.permissions],
  revoked_at: key.revokedAt === null ? null : formatScoringTimestamp(key.revokedAt.getTime()),
  created_at: formatScoringTimestamp(key.createdAt.getTime()),
});

/** The caller, who must manage the account: a portal session, or a key with `create_scorers`. */
const manager = (request: FastifyRequest) => requirePermission(request, 'create_scorers');

/** What the account routes use: the account service and how their API-key scope is built. */
export interface AccountRouteDeps {
  account: AccountPortalService;
  keyScope: ApiKeyScopeDeps;
}

/**
 * Account management over HTTP (tag `account`): the routes the developer portal uses, open to
 * integrators' keys too. The same key and account budgets as the scoring routes, in the same
 * store, so creating a key spends them too (a portal session spends its account's).
 */
export async function accountRoutes(instance: FastifyInstance, deps: AccountRouteDeps): Promise<void> {
  const app = typed(instance);
  const service = deps.account;
  await registerApiKeyScope(app, deps.keyScope);
  const tags = ['account'];
  // Account data, answered to a cookie or a key: never kept by a shared cache.
  app.addHook('onSend', async (_request, reply) => {
    reply.header('cache-control', 'private, no-store');
  });

  app.get('/v2/account', { schema: { tags, summary: 'The caller\'s account', description: who, security, response: { 200: AccountBody, ...errorResponses(401, 403, 429) } } },
    async (request) => accountJson(await service.account(manager(request))));

  app.get('/v2/account/scorer-types', { schema: { tags, summary: 'The scorer types this server knows', description: who, security, response: { 200: ScorerTypes, ...errorResponses(401, 403, 429) } } },
    async (request) => {
      manager(request);
      return { items: scorerTypeNames.map((name) => ({ name, description: scorerTypeOf(name).description })) };
    });

  app.get('/v2/account/scorers', { schema: { tags, summary: 'The account\'s scorers', description: who, security, response: { 200: ScorerList, ...errorResponses(401, 403, 429) } } },
    async (request) => ({ items: (await service.scorers(manager(request))).map(scorerJson) }));

  app.post(
    '/v2/account/scorers',
    { schema: { tags, summary: 'Create a scorer', description: who, security, body: NewScorer, response: { 201: ScorerBody, ...errorResponses(400, 401, 403, 413, 415, 429) } } },
    async (request, reply) => {
      const body = request.body;
      const scorer = await service.createScorer(manager(request), {
        name: body.name, type: body.type, threshold: body.threshold, weights: body.weights, settings: body.settings, requiresSignature: body.requires_signature,
      });
      return reply.code(201).send(scorerJson(scorer));
    },
  );

  app.patch(
    '/v2/account/scorers/:scorer_id',
    {
      schema: {
        tags, summary: 'Change a scorer (name, type, threshold, weight overrides, settings)',
        description: `Absent fields keep their value; \`weights\` replaces every override.${who}`,
        security, params: ScorerParams, body: ScorerChanges, response: { 200: ScorerBody, ...errorResponses(400, 401, 403, 404, 413, 415, 429) },
      },
    },
    async (request) => {
      const body = request.body;
      const scorer = await service.updateScorer(manager(request), Number(request.params.scorer_id), {
        name: body.name, type: body.type, threshold: body.threshold, weights: body.weights, settings: body.settings, requiresSignature: body.requires_signature,
      });
      return scorerJson(scorer);
    },
  );

  app.get('/v2/account/keys', { schema: { tags, summary: 'The account\'s API keys (never their secrets)', description: who, security, response: { 200: KeyList, ...errorResponses(401, 403, 429) } } },
    async (request) => ({ items: (await service.keys(manager(request))).map(keyJson) }));

  app.post(
    '/v2/account/keys',
    {
      schema: {
        tags, summary: 'Create an API key (shown once)',
        description: `A tier-1 key with a label and permissions (default: all but historical_endpoint); an API key can only give permissions it has. The full key is in this answer only. It shares the account's rate budget and daily batch quota; an account holds at most MAX_API_KEYS_PER_ACCOUNT live keys (409 \`api_key_limit_reached\`).${who}`,
        security, body: NewKey, response: { 201: CreatedKey, ...errorResponses(400, 401, 403, 409, 413, 415, 429) },
      },
    },
    async (request, reply) => {
      const { key, apiKey } = await service.createKey(manager(request), request.body.name, request.body.permissions);
      return reply.code(201).send({ ...keyJson(apiKey), key });
    },
  );

  app.delete(
    '/v2/account/keys/:prefix',
    { schema: { tags, summary: 'Revoke an API key', description: `It stops working within API_KEY_CACHE_TTL_MS, everywhere.${who}`, security, params: KeyParams, response: { 200: KeyBody, ...errorResponses(400, 401, 403, 404, 429) } } },
    async (request) => keyJson(await service.revokeKey(manager(request), request.params.prefix)),
  );

  app.get(
    '/v2/account/usage',
    {
      schema: {
        tags, summary: 'Requests and 429 answers per key per UTC day',
        description: `Counted per process in memory and stored every USAGE_FLUSH_MS; this server's own recent requests are included at once.${who}`,
        security, querystring: UsageQuery, response: { 200: Usage, ...errorResponses(400, 401, 403, 429) },
      },
    },
    async (request) => service.usage(manager(request), request.query.days ?? 14),
  );
}
