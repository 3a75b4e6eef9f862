import type { Kysely, Migration } from 'kysely';
import { type DialectName, orderedTextType, timeColumnType } from '../dialect.js';

/**
 * The operator push (`stampgate onchain push`): a job per list sent to one chain for one scorer,
 * an item per address, the exactly-once claims and the sender's nonce counter.
 *
 * - An item keeps the signed raw transaction, its hash and its sender nonce from before it is
 *   broadcast: a worker that finds it sent but unconfirmed (the previous one crashed) broadcasts
 *   the identical bytes again, which the chain can mine at most once.
 * - `onchain_push_sends` has one row per (chain, scorer, address, score event) a transaction was
 *   sent for, written with the item's raw transaction: its key is what makes a second push of an
 *   unchanged score `skipped`. A reverted transaction deletes its row (nothing was attested).
 * - `onchain_sender_nonces` is the next nonce of each (chain, sender): taken in the transaction
 *   that stores the raw transaction, so two items never share one and none is skipped.
 */
export function onchainPush(dialect: DialectName): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('onchain_push_jobs')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('chain_id', 'bigint', (c) => c.notNull())
        .addColumn('scorer_id', 'integer', (c) => c.notNull())
        .addColumn('account_id', 'integer', (c) => c.notNull())
        .addColumn('sender', orderedTextType(dialect), (c) => c.notNull())
        .addColumn('total', 'integer', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('run_after', timeColumnType, (c) => c.notNull())
        .addColumn('lease_owner', 'text')
        .addColumn('lease_expires_at', timeColumnType)
        .addColumn('created_at', timeColumnType, (c) => c.notNull())
        .addColumn('finished_at', timeColumnType)
        .execute();
      await db.schema.createIndex('onchain_push_jobs_due_idx').on('onchain_push_jobs').columns(['status', 'run_after']).execute();
      await db.schema
        .createTable('onchain_push_items')
        .addColumn('job_id', 'text', (c) => c.notNull())
        .addColumn('position', 'integer', (c) => c.notNull())
        .addColumn('address', orderedTextType(dialect), (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('score_event_id', 'integer')
        .addColumn('sender_nonce', 'bigint')
        .addColumn('raw_tx', 'text')
        .addColumn('tx_hash', 'text')
        .addColumn('uid', 'text')
        .addColumn('reason', 'text')
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('retry_at', timeColumnType, (c) => c.notNull().defaultTo(0))
        .addColumn('finished_at', timeColumnType)
        .addPrimaryKeyConstraint('onchain_push_items_pk', ['job_id', 'position'])
        .execute();
      await db.schema
        .createTable('onchain_push_sends')
        .addColumn('chain_id', 'bigint', (c) => c.notNull())
        .addColumn('scorer_id', 'integer', (c) => c.notNull())
        .addColumn('address', orderedTextType(dialect), (c) => c.notNull())
        .addColumn('score_event_id', 'integer', (c) => c.notNull())
        .addColumn('job_id', 'text', (c) => c.notNull())
        .addColumn('position', 'integer', (c) => c.notNull())
        .addPrimaryKeyConstraint('onchain_push_sends_pk', ['chain_id', 'scorer_id', 'address', 'score_event_id'])
        .execute();
      await db.schema
        .createTable('onchain_sender_nonces')
        .addColumn('chain_id', 'bigint', (c) => c.notNull())
        .addColumn('sender', orderedTextType(dialect), (c) => c.notNull())
        .addColumn('next_nonce', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('onchain_sender_nonces_pk', ['chain_id', 'sender'])
        .execute();
    },
  };
}
