import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { WebhookService } from '../webhooks.service.js';
import { errorResponses } from '../../http/errors.js';
import { ScorerIdSchema } from '../../http/schemas.js';
import { typed } from '../../http/typebox.js';
import { requirePermission } from '../../scoring/accounts/api-key-auth.js';
import {
  CreatedWebhookSchema,
  DeliveryLogQuery,
  DeliveryLogSchema,
  IdSchema,
  RegisterWebhookBody,
  RetriedDeliverySchema,
  RotatedSecretSchema,
  WebhookSchema,
} from '../webhooks.schema.js';

const security = [{ apiKey: [] }];

/** Webhook endpoints of a scorer: managing them needs the `create_scorers` permission, like the scorer itself. */
/** What the webhook routes use: the endpoints and a way to wake this process's delivery worker. */
export interface WebhookRouteDeps {
  endpoints: WebhookService;
  /** A manual retry was queued: deliver it now rather than at the worker's next poll. */
  wakeDeliveries: () => void;
}

export function webhookRoutes(instance: FastifyInstance, deps: WebhookRouteDeps): void {
  const app = typed(instance);
  const service = deps.endpoints;

  app.post(
    '/v2/scorers/:scorer_id/webhooks',
    {
      schema: {
        tags: ['v2'],
        summary: 'Register a webhook endpoint',
        description:
          'Events of the scorer are POSTed to `url`, signed per the Standard Webhooks specification (`webhook-id`, ' +
          '`webhook-timestamp`, `webhook-signature`). The `secret` is shown only in this answer. The URL must be ' +
          'https in production and must not resolve to a loopback, private, link-local or metadata address. 409 ' +
          '`webhook_limit_reached` past the endpoints one scorer may have, `webhook_account_limit_reached` past those ' +
          'of the account over all its scorers (10 each by default).\n\n' +
          'Events: `score.updated` (the score, passing state, stamps or error changed) and `score.expiring` (the ' +
          'earliest counted stamp expires within the lead time, once per expiry date). The body is the v2 score ' +
          'object plus `scorer_id`, `event_id` and `type`; `webhook-id` is the event id, the same on every retry ' +
          '(about 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h). Answer 2xx within 10 s. A receiver in Node:\n\n' +
          '```js\n' +
          "import { Webhook } from 'standardwebhooks';\n" +
          '// rawBody: the body exactly as received, before JSON parsing\n' +
          'const event = new Webhook(process.env.WEBHOOK_SECRET).verify(rawBody, {\n' +
          "  'webhook-id': req.headers['webhook-id'],\n" +
          "  'webhook-timestamp': req.headers['webhook-timestamp'],\n" +
          "  'webhook-signature': req.headers['webhook-signature'],\n" +
          '}); // throws on a bad signature or a stale timestamp\n' +
          '// de-duplicate on webhook-id: delivery is at least once\n' +
          '```\n\n' +
          'A complete one: `examples/webhook-receiver.ts` in the repository.',
        security,
        params: Type.Object({ scorer_id: ScorerIdSchema }),
        body: RegisterWebhookBody,
        response: { 201: CreatedWebhookSchema, ...errorResponses(400, 401, 403, 404, 409, 429, 503) },
      },
    },
    async (request, reply) => {
      const caller = requirePermission(request, 'create_scorers');
      // An endpoint receives every score of the scorer: a key that may not read scores may not register one.
      requirePermission(request, 'read_scores');
      const created = await service.register(caller.accountId, Number(request.params.scorer_id), request.body);
      return reply.code(201).header('cache-control', 'no-store').send(created);
    },
  );

  app.get(
    '/v2/scorers/:scorer_id/webhooks',
    {
      schema: {
        tags: ['v2'],
        summary: 'List the webhook endpoints of a scorer',
        description: 'Without secrets. A disabled endpoint shows `enabled: false` and why in `disabled_reason`.',
        security,
        params: Type.Object({ scorer_id: ScorerIdSchema }),
        response: { 200: Type.Object({ items: Type.Array(WebhookSchema) }), ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => {
      const caller = requirePermission(request, 'create_scorers');
      return { items: await service.list(caller.accountId, Number(request.params.scorer_id)) };
    },
  );

  app.delete(
    '/v2/webhooks/:id',
    {
      schema: {
        tags: ['v2'],
        summary: 'Delete a webhook endpoint',
        description: 'Its pending deliveries and its delivery log go with it.',
        security,
        params: Type.Object({ id: IdSchema }),
        response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request, reply) => {
      const caller = requirePermission(request, 'create_scorers');
      await service.remove(caller.accountId, Number(request.params.id));
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/v2/webhooks/:id/rotate-secret',
    {
      schema: {
        tags: ['v2'],
        summary: 'Replace the signing secret of a webhook endpoint',
        description:
          'The new secret is shown only in this answer. Until `previous_secret_valid_until` each delivery carries ' +
          'two signatures (old and new secret) in `webhook-signature`, so receivers can switch without losing events.',
        security,
        params: Type.Object({ id: IdSchema }),
        response: { 200: RotatedSecretSchema, ...errorResponses(400, 401, 403, 404, 429, 503) },
      },
    },
    async (request, reply) => {
      const caller = requirePermission(request, 'create_scorers');
      const rotated = await service.rotateSecret(caller.accountId, Number(request.params.id));
      return reply.header('cache-control', 'no-store').send(rotated);
    },
  );

  app.get(
    '/v2/webhooks/:id/deliveries',
    {
      schema: {
        tags: ['v2'],
        summary: 'The delivery log of a webhook endpoint',
        description: 'Every attempt, newest first: event id, attempt number, status code, duration, error, time.',
        security,
        params: Type.Object({ id: IdSchema }),
        querystring: DeliveryLogQuery,
        response: { 200: DeliveryLogSchema, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => {
      const caller = requirePermission(request, 'create_scorers');
      const { limit, before } = request.query;
      return service.deliveryLog(caller.accountId, Number(request.params.id), limit ?? 50, before ?? null);
    },
  );

  app.post(
    '/v2/webhooks/:id/deliveries/:delivery_id/retry',
    {
      schema: {
        tags: ['v2'],
        summary: 'Send a delivery again now',
        description:
          'Queues the delivery with a fresh retry schedule (a delivered one is sent again; receivers de-duplicate by ' +
          '`webhook-id`). A disabled endpoint is enabled again. A delivery that is still queued is left as it is ' +
          '(202, not counted). 409 `delivery_in_progress` while an attempt is in flight, 409 ' +
          '`delivery_retry_limit_reached` once the delivery was retried the most times allowed (5 by default).',
        security,
        params: Type.Object({ id: IdSchema, delivery_id: IdSchema }),
        response: { 202: RetriedDeliverySchema, ...errorResponses(400, 401, 403, 404, 409, 429) },
      },
    },
    async (request, reply) => {
      const caller = requirePermission(request, 'create_scorers');
      const retried = await service.retry(caller.accountId, Number(request.params.id), Number(request.params.delivery_id));
      deps.wakeDeliveries();
      return reply.code(202).send(retried);
    },
  );
}
