import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { EventFeedService } from '../score-event-feed.js';
import { errorResponses } from '../../http/errors.js';
import { ScorerIdSchema } from '../../http/schemas.js';
import { typed } from '../../http/typebox.js';
import { requirePermission } from '../../scoring/accounts/api-key-auth.js';
import { EventFeedQuery, EventFeedSchema } from '../webhooks.schema.js';

/** The event feed: the same events and payloads as the webhooks, for integrators who poll instead. */
/** What the event feed route uses. */
export interface EventFeedRouteDeps {
  feed: EventFeedService;
}

const asWritten = (body: string): string => body;

export function eventFeedRoutes(instance: FastifyInstance, deps: EventFeedRouteDeps): void {
  const app = typed(instance);
  app.get(
    '/v2/scorers/:scorer_id/events',
    {
      schema: {
        tags: ['v2'],
        summary: 'The score events of a scorer, oldest first',
        description:
          'Every `score.updated` and `score.expiring` event with an id above `after`, oldest first; `data` is the ' +
          'body a webhook of the event carries. Poll `next` (it carries `after` = the last event id seen) for more. ' +
          'Needs `historical_endpoint` (off by default): the feed holds every past score and stamp breakdown of the scorer.',
        security: [{ apiKey: [] }],
        params: Type.Object({ scorer_id: ScorerIdSchema }),
        querystring: EventFeedQuery,
        response: { 200: EventFeedSchema, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request, reply) => {
      // The feed replays every past score of every address: history, like .../score/{address}/history.
      const caller = requirePermission(request, 'historical_endpoint');
      const { after, limit } = request.query;
      const body = await deps.feed.eventsJson(caller.accountId, Number(request.params.scorer_id), after ?? 0, limit ?? 100);
      // The body is written as text (see pageJson); the schema above documents it.
      return reply.type('application/json; charset=utf-8').serializer(asWritten).send(body as never);
    },
  );
}
