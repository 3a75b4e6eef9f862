import type { Selectable } from 'kysely';
import { type Database, writeTransaction } from '../db/connection.js';
import type { WebhookEndpointsTable } from '../db/tables/webhooks.js';

export type WebhookEndpointRow = Selectable<WebhookEndpointsTable>;

export interface NewEndpoint {
  accountId: number;
  scorerId: number;
  url: string;
  events: readonly string[];
  description: string | null;
  now: number;
}

export interface AttemptLogRow {
  delivery_id: number;
  event_id: number;
  state: string;
  attempt: number;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
  created_at: number;
  next_attempt_at: number;
}

/** Queries of the account-facing side: endpoints, their delivery log, manual retries. */
export function webhookEndpointsRepository(database: Database) {
  const { db, dialect } = database;
  return {
    /**
     * Inserts an endpoint unless its scorer has `maxPerScorer` already (`scorer_full`) or its account has
     * `maxPerAccount` over all its scorers (`account_full`). On PostgreSQL the account row is locked first, so
     * that concurrent registrations of the account (on any of its scorers) cannot both pass the counts.
     */
    async insertWithin(
      maxPerScorer: number,
      maxPerAccount: number,
      endpoint: NewEndpoint,
    ): Promise<WebhookEndpointRow | 'scorer_full' | 'account_full'> {
      return writeTransaction(database, async (trx) => {
        if (dialect === 'postgres') {
          await trx.selectFrom('accounts').select('id').where('id', '=', endpoint.accountId).forUpdate().execute();
        }
        const { ofScorer, ofAccount } = await trx
          .selectFrom('webhook_endpoints')
          .select((eb) => [
            eb.fn.sum<number>(eb.case().when('scorer_id', '=', endpoint.scorerId).then(1).else(0).end()).as('ofScorer'),
            eb.fn.countAll<number>().as('ofAccount'),
          ])
          .where('account_id', '=', endpoint.accountId)
          .executeTakeFirstOrThrow();
        if (Number(ofScorer ?? 0) >= maxPerScorer) return 'scorer_full';
        if (Number(ofAccount) >= maxPerAccount) return 'account_full';
        return trx
          .insertInto('webhook_endpoints')
          .values({
            account_id: endpoint.accountId,
            scorer_id: endpoint.scorerId,
            url: endpoint.url,
            events: JSON.stringify(endpoint.events),
            description: endpoint.description,
            secret_version: 1,
            enabled: 1,
            created_at: endpoint.now,
            updated_at: endpoint.now,
          })
          .returningAll()
          .executeTakeFirstOrThrow();
      });
    },

    async listForScorer(scorerId: number): Promise<WebhookEndpointRow[]> {
      return db.selectFrom('webhook_endpoints').selectAll().where('scorer_id', '=', scorerId).orderBy('id').execute();
    },

    async findOfAccount(id: number, accountId: number): Promise<WebhookEndpointRow | undefined> {
      return db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst();
    },

    /** Removes the endpoint with its deliveries and their attempts (foreign keys cascade). */
    async deleteOfAccount(id: number, accountId: number): Promise<boolean> {
      const result = await db.deleteFrom('webhook_endpoints').where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },

    /** Bumps the secret version; the old one keeps signing until `previousUntil` (null = not at all). */
    async rotate(id: number, accountId: number, now: number, previousUntil: number | null): Promise<WebhookEndpointRow | undefined> {
      return writeTransaction(database, async (trx) => {
        const current = await trx
          .selectFrom('webhook_endpoints')
          .select('secret_version')
          .where('id', '=', id)
          .where('account_id', '=', accountId)
          .executeTakeFirst();
        if (!current) return undefined;
        return trx
          .updateTable('webhook_endpoints')
          .set({
            secret_version: current.secret_version + 1,
            previous_secret_version: previousUntil === null ? null : current.secret_version,
            previous_secret_expires_at: previousUntil,
            updated_at: now,
          })
          .where('id', '=', id)
          .returningAll()
          .executeTakeFirst();
      });
    },

    /** The delivery log of an endpoint, newest attempt first. */
    async attempts(endpointId: number, limit: number, beforeAttemptId: number | null): Promise<(AttemptLogRow & { id: number })[]> {
      let query = db
        .selectFrom('webhook_attempts as a')
        .innerJoin('webhook_deliveries as d', 'd.id', 'a.delivery_id')
        .select([
          'a.id',
          'a.delivery_id',
          'd.event_id',
          'd.state',
          'a.attempt',
          'a.status_code',
          'a.duration_ms',
          'a.error',
          'a.created_at',
          'd.next_attempt_at',
        ])
        .where('d.endpoint_id', '=', endpointId);
      if (beforeAttemptId !== null) query = query.where('a.id', '<', beforeAttemptId);
      return query.orderBy('a.id', 'desc').limit(limit).execute();
    },

    /**
     * Queues a delivery again now, with a fresh retry schedule, and enables its endpoint again (a manual retry
     * says the receiver is fixed). Idempotent while the delivery waits to be sent: one already `queued` is left as
     * it is (`already_queued`, not counted). `running` when an attempt is in flight; `limit_reached` when the
     * delivery was retried `maxManualRetries` times already; undefined when there is no such delivery.
     */
    async retry(
      endpointId: number,
      deliveryId: number,
      now: number,
      maxManualRetries: number,
    ): Promise<'queued' | 'already_queued' | 'running' | 'limit_reached' | undefined> {
      return writeTransaction(database, async (trx) => {
        let query = trx
          .selectFrom('webhook_deliveries')
          .select(['state', 'lease_expires_at', 'manual_retries', 'next_attempt_at'])
          .where('id', '=', deliveryId)
          .where('endpoint_id', '=', endpointId);
        if (dialect === 'postgres') query = query.forUpdate();
        const delivery = await query.executeTakeFirst();
        if (!delivery) return undefined;
        if (delivery.state === 'running' && (delivery.lease_expires_at ?? 0) >= now) return 'running';
        if (delivery.state === 'queued' && delivery.next_attempt_at <= now) return 'already_queued';
        if (delivery.manual_retries >= maxManualRetries) return 'limit_reached';
        await trx
          .updateTable('webhook_deliveries')
          .set((eb) => ({
            state: 'queued',
            attempts: 0,
            next_attempt_at: now,
            lease_owner: null,
            lease_expires_at: null,
            manual_retries: eb('manual_retries', '+', 1),
          }))
          .where('id', '=', deliveryId)
          .execute();
        await trx
          .updateTable('webhook_endpoints')
          .set({ enabled: 1, disabled_reason: null, failing_since: null, updated_at: now })
          .where('id', '=', endpointId)
          .where('enabled', '=', 0)
          .execute();
        return 'queued';
      });
    },
  };
}

export type WebhookEndpointsRepository = ReturnType<typeof webhookEndpointsRepository>;
