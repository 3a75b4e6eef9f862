/** Tables of webhook endpoints, their outbox, deliveries and delivery log (migration 0015). */

import type { Generated } from 'kysely';

export type WebhookEventType = 'score.updated' | 'score.expiring';

export interface WebhookEndpointsTable {
  id: Generated<number>;
  account_id: number;
  scorer_id: number;
  url: string;
  /** JSON array of WebhookEventType. */
  events: string;
  description: string | null;
  /** The secret is derived from WEBHOOK_SECRET_KEY, the id and this version; rotation bumps it. */
  secret_version: number;
  /** The version that still signs beside the current one until `previous_secret_expires_at`. */
  previous_secret_version: number | null;
  previous_secret_expires_at: number | null;
  /** 0/1. */
  enabled: number;
  disabled_reason: string | null;
  /** Epoch ms of the first failed attempt since the last success; null when not failing. */
  failing_since: number | null;
  created_at: number;
  updated_at: number;
  /** Number of the claim that last took a delivery of this endpoint; 0 when none has (migration 0024). */
  last_claim_turn: Generated<number>;
}

/** One row per score event, written by appendScoreEvent in the score change's transaction. */
export interface WebhookOutboxTable {
  event_id: number;
  scorer_id: number;
  event_type: string;
  created_at: number;
}

/**
 * `queued` (to send), `running` (leased to a worker), `failed` (last attempt failed, a retry is
 * scheduled at next_attempt_at), `delivered`, `dead` (every attempt failed).
 */
export type WebhookDeliveryState = 'queued' | 'running' | 'failed' | 'delivered' | 'dead';

export interface WebhookDeliveriesTable {
  id: Generated<number>;
  endpoint_id: number;
  event_id: number;
  state: WebhookDeliveryState;
  attempts: number;
  next_attempt_at: number;
  lease_owner: string | null;
  lease_expires_at: number | null;
  last_error: string | null;
  /** When the event was appended (the outbox lag metric reads it). */
  event_created_at: number;
  created_at: number;
  delivered_at: number | null;
  /** Manual retries the account made of this delivery (migration 0024); they are limited. */
  manual_retries: Generated<number>;
}

export interface WebhookAttemptsTable {
  id: Generated<number>;
  delivery_id: number;
  attempt: number;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
  created_at: number;
}

/** One `score.expiring` event per (scorer, address, expiry): the primary key is the guard. */
export interface ScoreExpiryNoticesTable {
  scorer_id: number;
  address: string;
  expiration_date: number;
  event_id: number;
  created_at: number;
}

export interface WebhookTables {
  webhook_endpoints: WebhookEndpointsTable;
  webhook_outbox: WebhookOutboxTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  score_expiry_notices: ScoreExpiryNoticesTable;
}
