import { type Static, Type } from '@sinclair/typebox';
import { Integer } from '../http/schemas.js';

export const WEBHOOK_EVENT_TYPES = ['score.updated', 'score.expiring'] as const;

const Timestamp = Type.String({ description: 'ISO 8601 date-time (UTC, +00:00).', examples: ['2026-11-25T14:00:00.000+00:00'] });
const EventType = Type.Union(WEBHOOK_EVENT_TYPES.map((name) => Type.Literal(name)), { description: 'A webhook event type.' });

export const IdSchema = Type.String({ pattern: '^[0-9]{1,15}$', description: 'Identifier (a positive integer).' });

export const RegisterWebhookBody = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 2048, description: 'Where events are POSTed (https in production).', examples: ['https://example.org/hooks/stampgate'] }),
    events: Type.Array(EventType, { minItems: 1, maxItems: WEBHOOK_EVENT_TYPES.length, uniqueItems: true, examples: [['score.updated', 'score.expiring']] }),
    description: Type.Optional(Type.String({ maxLength: 500 })),
  },
  { additionalProperties: false },
);
export type RegisterWebhookInput = Static<typeof RegisterWebhookBody>;

export const WebhookSchema = Type.Object(
  {
    id: Type.Integer(),
    scorer_id: Type.Integer(),
    url: Type.String(),
    events: Type.Array(EventType),
    description: Type.Union([Type.String(), Type.Null()]),
    enabled: Type.Boolean({ description: 'False once the endpoint was disabled; `disabled_reason` says why.' }),
    disabled_reason: Type.Union([Type.String(), Type.Null()]),
    failing_since: Type.Union([Timestamp, Type.Null()], { description: 'First failed attempt since the last success.' }),
    created_at: Timestamp,
  },
  { $id: 'Webhook', title: 'Webhook' },
);
export type WebhookView = Static<typeof WebhookSchema>;

export const CreatedWebhookSchema = Type.Object(
  {
    id: Type.Integer(),
    url: Type.String(),
    events: Type.Array(EventType),
    description: Type.Union([Type.String(), Type.Null()]),
    secret: Type.String({ description: 'The signing secret (`whsec_…`): shown only in this response.', examples: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'] }),
    created_at: Timestamp,
  },
  { title: 'Created webhook' },
);
export type CreatedWebhook = Static<typeof CreatedWebhookSchema>;

export const RotatedSecretSchema = Type.Object(
  {
    id: Type.Integer(),
    secret: Type.String({ description: 'The new signing secret: shown only in this response.' }),
    previous_secret_valid_until: Type.Union([Timestamp, Type.Null()], {
      description: 'Until then deliveries carry a signature by the previous secret too (WEBHOOK_ROTATION_GRACE_HOURS); null = no longer.',
    }),
  },
  { title: 'Rotated secret' },
);
export type RotatedSecret = Static<typeof RotatedSecretSchema>;

export const DeliveryAttemptSchema = Type.Object(
  {
    delivery_id: Type.Integer(),
    event_id: Type.String(),
    delivery_state: Type.String({ description: 'queued, running, failed (a retry is scheduled), delivered or dead.' }),
    attempt: Type.Integer({ description: '1 for the first attempt of this delivery.' }),
    status_code: Type.Union([Type.Integer(), Type.Null()], { description: "The receiver's HTTP status, null when it did not answer." }),
    duration_ms: Type.Integer(),
    error: Type.Union([Type.String(), Type.Null()]),
    created_at: Timestamp,
    next_attempt_at: Type.Union([Timestamp, Type.Null()], { description: 'When the delivery is tried again (state failed).' }),
  },
  { title: 'Delivery attempt' },
);
export type DeliveryAttemptView = Static<typeof DeliveryAttemptSchema>;

export const DeliveryLogQuery = Type.Object({
  limit: Type.Optional(Integer({ minimum: 1, maximum: 500, default: 50 })),
  before: Type.Optional(Integer({ minimum: 1, maximum: 2_147_483_647, description: 'Only attempts older than this cursor (the `next` of a previous page).' })),
});

export const DeliveryLogSchema = Type.Object({
  items: Type.Array(DeliveryAttemptSchema, { description: 'Newest attempt first.' }),
  next: Type.Union([Type.String(), Type.Null()], { description: 'Path of the next (older) page, null at the end.' }),
});

export const RetriedDeliverySchema = Type.Object({
  delivery_id: Type.Integer(),
  state: Type.Literal('queued'),
});

export const EventFeedQuery = Type.Object({
  after: Type.Optional(Integer({ minimum: 0, description: 'Only events with a greater event id (0 or absent: from the first).' })),
  limit: Type.Optional(Integer({ minimum: 1, maximum: 1000, default: 100 })),
});

export const FeedEventSchema = Type.Object({
  event_id: Type.String(),
  type: EventType,
  created_at: Timestamp,
  data: Type.Record(Type.String(), Type.Unknown(), { description: 'The same object a webhook of this event carries as its body.' }),
});

export const EventFeedSchema = Type.Object({
  items: Type.Array(FeedEventSchema, { description: 'Oldest first.' }),
  next: Type.String({ description: 'Path to poll for the following events (`after` = the last event id seen).' }),
});
