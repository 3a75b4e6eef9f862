import { type Kysely, type Migration, type SqlBool, sql } from 'kysely';
import { type DialectName, orderedTextType, timeColumnType, withIdColumn } from '../dialect.js';

/**
 * Webhooks: registered endpoints, the outbox every score event is written to in its own
 * transaction, one delivery per (endpoint, event) with its attempts (the account's delivery log),
 * and the guard that sends `score.expiring` once per (scorer, address, expiry).
 *
 * Endpoints store no secret: each one is derived from WEBHOOK_SECRET_KEY, the endpoint id and
 * `secret_version` (src/webhooks/webhook-secrets.ts). `event_id` columns carry no foreign key:
 * the event log has its own retention and a delivery log outlives nothing it needs.
 */
export function webhooks(dialect: DialectName): Migration {
  return {
    async up(db: Kysely<any>) {
      await withIdColumn(dialect, db.schema.createTable('webhook_endpoints'))
        .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('scorer_id', 'integer', (c) => c.notNull().references('scorers.id').onDelete('cascade'))
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('events', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('secret_version', 'integer', (c) => c.notNull().defaultTo(1))
        .addColumn('previous_secret_version', 'integer')
        .addColumn('previous_secret_expires_at', timeColumnType)
        .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(1))
        .addColumn('disabled_reason', 'text')
        .addColumn('failing_since', timeColumnType)
        .addColumn('created_at', timeColumnType, (c) => c.notNull())
        .addColumn('updated_at', timeColumnType, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('webhook_endpoints_scorer_idx').on('webhook_endpoints').columns(['scorer_id', 'id']).execute();

      await db.schema
        .createTable('webhook_outbox')
        .addColumn('event_id', 'bigint', (c) => c.primaryKey())
        .addColumn('scorer_id', 'integer', (c) => c.notNull())
        .addColumn('event_type', 'text', (c) => c.notNull())
        .addColumn('created_at', timeColumnType, (c) => c.notNull())
        .execute();

      await withIdColumn(dialect, db.schema.createTable('webhook_deliveries'))
        .addColumn('endpoint_id', 'integer', (c) => c.notNull().references('webhook_endpoints.id').onDelete('cascade'))
        .addColumn('event_id', 'bigint', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('next_attempt_at', timeColumnType, (c) => c.notNull())
        .addColumn('lease_owner', 'text')
        .addColumn('lease_expires_at', timeColumnType)
        .addColumn('last_error', 'text')
        .addColumn('event_created_at', timeColumnType, (c) => c.notNull())
        .addColumn('created_at', timeColumnType, (c) => c.notNull())
        .addColumn('delivered_at', timeColumnType)
        .addUniqueConstraint('webhook_deliveries_endpoint_event_key', ['endpoint_id', 'event_id'])
        .execute();
      // Partial indexes over the pending deliveries only: the claim looks for due ones and for each endpoint's
      // oldest pending event, and must not wade through the delivered history to find them.
      const pending = sql<SqlBool>`state in ('queued', 'failed', 'running')`;
      await db.schema.createIndex('webhook_deliveries_due_idx').on('webhook_deliveries').columns(['next_attempt_at', 'id']).where(pending).execute();
      await db.schema.createIndex('webhook_deliveries_pending_idx').on('webhook_deliveries').columns(['endpoint_id', 'event_id']).where(pending).execute();

      await withIdColumn(dialect, db.schema.createTable('webhook_attempts'))
        .addColumn('delivery_id', 'integer', (c) => c.notNull().references('webhook_deliveries.id').onDelete('cascade'))
        .addColumn('attempt', 'integer', (c) => c.notNull())
        .addColumn('status_code', 'integer')
        .addColumn('duration_ms', 'integer', (c) => c.notNull())
        .addColumn('error', 'text')
        .addColumn('created_at', timeColumnType, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('webhook_attempts_delivery_idx').on('webhook_attempts').columns(['delivery_id', 'id']).execute();

      await db.schema
        .createTable('score_expiry_notices')
        .addColumn('scorer_id', 'integer', (c) => c.notNull())
        .addColumn('address', orderedTextType(dialect), (c) => c.notNull())
        .addColumn('expiration_date', timeColumnType, (c) => c.notNull())
        .addColumn('event_id', 'bigint', (c) => c.notNull())
        .addColumn('created_at', timeColumnType, (c) => c.notNull())
        .addPrimaryKeyConstraint('score_expiry_notices_pkey', ['scorer_id', 'address', 'expiration_date'])
        .execute();
      // The expiring scan reads the scores whose earliest counted stamp expires inside the lead time.
      await db.schema.createIndex('scores_expiration_date_idx').on('scores').column('expiration_date').execute();
    },
  };
}
