import { sql } from 'kysely';
import { compiledOnce, type Database, type Db, writeTransaction } from '../../db/connection.js';
import { lockSkippingLocked } from '../../db/dialect.js';
import type { BatchChunksTable, BatchesTable } from '../../db/tables/batches.js';

export type BatchRow = BatchesTable;
export type BatchChunkRow = Omit<BatchChunksTable, 'id'> & { id: number };

/** The quota was spent: nothing of the batch was written. */
export class QuotaExceeded extends Error {
  constructor(readonly used: number) {
    super('batch quota exceeded');
  }
}

/** The chunk is no longer this worker's (lease taken over, or the batch cancelled): the item's write is rolled back. */
export class ChunkLeaseLost extends Error {
  constructor() {
    super('batch chunk lease lost');
  }
}

export interface NewBatch {
  id: string;
  accountId: number;
  keyId: number;
  scorerId: number;
  createdAt: number;
  /** The UTC day (YYYY-MM-DD) whose usage (the account's) the batch spends, and the allowance for it. */
  day: string;
  /** Null: no quota (the operator's batches), and nothing is counted. */
  dailyQuota: number | null;
}

/**
 * Adds a batch's addresses to the day's usage inside `trx` (the transaction that writes the
 * batch): one atomic upsert decides the quota, also for batches created at the same moment
 * elsewhere. Throws QuotaExceeded, rolling the transaction back, when it would pass the quota.
 */
export async function spendDailyUsage(trx: Db, batch: NewBatch, total: number): Promise<void> {
  if (batch.dailyQuota === null) return;
  const usage = await trx
    .insertInto('batch_usage')
    .values({ account_id: batch.accountId, day: batch.day, addresses: total })
    .onConflict((oc) => oc.columns(['account_id', 'day']).doUpdateSet((eb) => ({ addresses: eb('batch_usage.addresses', '+', total) })))
    .returning('addresses')
    .executeTakeFirstOrThrow();
  if (Number(usage.addresses) > batch.dailyQuota) throw new QuotaExceeded(Number(usage.addresses) - total);
}

export interface ItemOutcome {
  state: 'done' | 'failed';
  result: string | null;
  error: string | null;
}

export function batchesRepository(database: Database) {
  const { db, dialect } = database;
  const dueSubmission = compiledOnce((db: Db, now: number) =>
    db.selectFrom('scoring_jobs').select('id').where('state', '=', 'queued').where('run_after', '<=', now).limit(1),
  );
  const claimChunk = compiledOnce((db: Db, now: number, owner: string, leaseExpiresAt: number) =>
    db
      .updateTable('batch_chunks')
      .set({ state: 'running', lease_owner: owner, lease_expires_at: leaseExpiresAt })
      .where('id', '=', (eb) =>
        lockSkippingLocked(
          dialect,
          eb
            .selectFrom('batch_chunks')
            .select('id')
            .where((eb) =>
              eb.or([eb('state', '=', 'queued'), eb.and([eb('state', '=', 'running'), eb('lease_expires_at', '<', now)])]),
            )
            .orderBy('id')
            .limit(1),
        ),
      )
      .returningAll(),
  );
  // The lease check, the lease renewal and the chunk's counters in one statement, inside the
  // transaction that writes the item (and the score): a chunk taken over or cancelled matches no row.
  const countItem = compiledOnce((db: Db, id: number, owner: string, leaseExpiresAt: number, done: number, failed: number) =>
    db
      .updateTable('batch_chunks')
      .set((eb) => ({ lease_expires_at: leaseExpiresAt, done: eb('done', '+', done), failed: eb('failed', '+', failed) }))
      .where('id', '=', id)
      .where('lease_owner', '=', owner)
      .where('state', '=', 'running')
      .returning('id'),
  );
  const finishItem = compiledOnce(
    (db: Db, batchId: string, position: number, state: 'done' | 'failed', result: string | null, error: string | null, now: number) =>
      db
        .updateTable('batch_items')
        .set({ state, result, error, finished_at: now })
        .where('batch_id', '=', batchId)
        .where('position', '=', position)
        .where('state', '=', 'pending')
        .returning('position'),
  );
  const scoreRow = compiledOnce((db: Db, scorerId: number, address: string) =>
    db.selectFrom('scores').selectAll().where('scorer_id', '=', scorerId).where('address', '=', address),
  );
  const resultsPage = compiledOnce((db: Db, batchId: string, from: number, limit: number) =>
    db
      .selectFrom('batch_items')
      .select(['position', 'address', 'state', 'result', 'error'])
      .where('batch_id', '=', batchId)
      .where('position', '>=', from)
      .orderBy('position')
      .limit(limit),
  );

  async function liveCounts(executor: Db, batchId: string): Promise<{ done: number; failed: number; open: number }> {
    const row = await executor
      .selectFrom('batch_chunks')
      .select((eb) => [
        eb.fn.coalesce(eb.fn.sum<number>('done'), eb.lit(0)).as('done'),
        eb.fn.coalesce(eb.fn.sum<number>('failed'), eb.lit(0)).as('failed'),
        eb.fn.sum<number>(eb.case().when('state', 'in', ['queued', 'running']).then(1).else(0).end()).as('open'),
      ])
      .where('batch_id', '=', batchId)
      .executeTakeFirst();
    return { done: Number(row?.done ?? 0), failed: Number(row?.failed ?? 0), open: Number(row?.open ?? 0) };
  }

  async function lockBatch(trx: Db, id: string): Promise<BatchRow | undefined> {
    const query = trx.selectFrom('batches').selectAll().where('id', '=', id);
    return dialect === 'postgres' ? query.forUpdate().executeTakeFirst() : query.executeTakeFirst();
  }

  return {
    /** Addresses the account queued on `day` (the daily quota is the account's). */
    async usage(accountId: number, day: string): Promise<number> {
      const row = await db.selectFrom('batch_usage').select('addresses').where('account_id', '=', accountId).where('day', '=', day).executeTakeFirst();
      return Number(row?.addresses ?? 0);
    },

    /** The batch of this account (any account: null), with its counts as they stand (summed from its chunks while it runs). */
    async findForAccount(id: string, accountId: number | null): Promise<BatchRow | undefined> {
      let query = db.selectFrom('batches').selectAll().where('id', '=', id);
      if (accountId !== null) query = query.where('account_id', '=', accountId);
      const row = await query.executeTakeFirst();
      if (!row || row.finished_at !== null) return row;
      const counts = await liveCounts(db, id);
      return { ...row, done: counts.done, failed: counts.failed };
    },

    async status(id: string): Promise<BatchRow['status'] | undefined> {
      return (await db.selectFrom('batches').select('status').where('id', '=', id).executeTakeFirst())?.status;
    },

    /** Cancels a batch that has not ended; its running chunks stop at their next item. Returns the row after. */
    async cancel(id: string, accountId: number | null, now: number): Promise<BatchRow | undefined> {
      return writeTransaction(database, async (trx) => {
        const row = await lockBatch(trx, id);
        if (!row || (accountId !== null && row.account_id !== accountId)) return undefined;
        if (row.status === 'DONE' || row.status === 'CANCELLED') return row;
        await trx.updateTable('batch_chunks').set({ state: 'cancelled', lease_owner: null, lease_expires_at: null }).where('batch_id', '=', id).where('state', 'in', ['queued', 'running']).execute();
        const counts = await liveCounts(trx, id);
        const after = { status: 'CANCELLED' as const, done: counts.done, failed: counts.failed, finished_at: now };
        await trx.updateTable('batches').set(after).where('id', '=', id).execute();
        return { ...row, ...after };
      });
    },

    /** Whether a submission's scoring job is due now: batches give way to it. */
    async submissionDue(now: number): Promise<boolean> {
      return (await dueSubmission(db, now)).rows.length > 0;
    },

    /** Takes the oldest chunk that is queued, or running with an expired lease, under a lease. */
    async claimChunk(owner: string, now: number, leaseMs: number): Promise<BatchChunkRow | undefined> {
      const chunk = (await claimChunk(db, now, owner, now + leaseMs)).rows[0] as BatchChunkRow | undefined;
      if (chunk) await db.updateTable('batches').set({ status: 'RUNNING' }).where('id', '=', chunk.batch_id).where('status', '=', 'PENDING').execute();
      return chunk;
    },

    async batchOf(id: string): Promise<BatchRow | undefined> {
      return db.selectFrom('batches').selectAll().where('id', '=', id).executeTakeFirst();
    },

    /** The chunk's items still to score (after a crash, those its earlier holder did not finish). */
    async pendingItems(chunk: BatchChunkRow): Promise<{ position: number; address: string }[]> {
      return db
        .selectFrom('batch_items')
        .select(['position', 'address'])
        .where('batch_id', '=', chunk.batch_id)
        .where('position', '>=', chunk.first_position)
        .where('position', '<=', chunk.last_position)
        .where('state', '=', 'pending')
        .orderBy('position')
        .execute();
    },

    /**
     * Records one item's outcome inside `trx` (the transaction of the score write, or one of its
     * own), renewing the lease; throws ChunkLeaseLost, rolling the transaction back, when the chunk
     * is no longer this worker's or the item was finished already.
     */
    async finishItem(trx: Db, chunk: BatchChunkRow, owner: string, now: number, leaseMs: number, position: number, outcome: ItemOutcome): Promise<void> {
      const counted = await countItem(trx, chunk.id, owner, now + leaseMs, outcome.state === 'done' ? 1 : 0, outcome.state === 'failed' ? 1 : 0);
      if (counted.rows.length === 0) throw new ChunkLeaseLost();
      const finished = await finishItem(trx, chunk.batch_id, position, outcome.state, outcome.result, outcome.error, now);
      if (finished.rows.length === 0) throw new ChunkLeaseLost();
    },

    /**
     * `finishItem` of many items of the chunk at once (a chunk's step, scored together), in a
     * statement per 200 items; throws ChunkLeaseLost as finishItem does.
     */
    async finishItems(trx: Db, chunk: BatchChunkRow, owner: string, now: number, leaseMs: number, items: readonly { position: number; outcome: ItemOutcome }[]): Promise<void> {
      if (items.length === 0) return;
      const done = items.filter((item) => item.outcome.state === 'done').length;
      const counted = await countItem(trx, chunk.id, owner, now + leaseMs, done, items.length - done);
      if (counted.rows.length === 0) throw new ChunkLeaseLost();
      for (let first = 0; first < items.length; first += 200) {
        const piece = items.slice(first, first + 200);
        const column = (pick: (outcome: ItemOutcome) => string | null) =>
          sql<string | null>`case position ${sql.join(piece.map((item) => sql`when ${item.position} then ${pick(item.outcome)}`), sql` `)} end`;
        const finished = await trx
          .updateTable('batch_items')
          .set({ state: column((o) => o.state) as never, result: column((o) => o.result), error: column((o) => o.error), finished_at: now })
          .where('batch_id', '=', chunk.batch_id)
          .where('position', 'in', piece.map((item) => item.position))
          .where('state', '=', 'pending')
          .returning('position')
          .execute();
        if (finished.length !== piece.length) throw new ChunkLeaseLost();
      }
    },

    /** `finishItem` in a transaction of its own (an item whose scoring wrote nothing). */
    async finishItemAlone(chunk: BatchChunkRow, owner: string, now: number, leaseMs: number, position: number, outcome: ItemOutcome): Promise<void> {
      await writeTransaction(database, (trx) => this.finishItem(trx, chunk, owner, now, leaseMs, position, outcome));
    },

    /** The score row as `trx` sees it (just written by the scoring whose item `trx` finishes). */
    async scoreRowIn(trx: Db, scorerId: number, address: string) {
      return (await scoreRow(trx, scorerId, address)).rows[0]!;
    },

    /** Marks the chunk done; the last chunk of a batch ends the batch with its final counts. */
    async finishChunk(chunk: BatchChunkRow, owner: string, now: number): Promise<'done' | 'batch-done' | 'lost'> {
      return writeTransaction(database, async (trx) => {
        // The batch row is locked first, so that two workers finishing its last two chunks at once
        // see each other's commit: exactly one of them ends the batch.
        const batch = await lockBatch(trx, chunk.batch_id);
        const updated = await trx
          .updateTable('batch_chunks')
          .set({ state: 'done', lease_owner: null, lease_expires_at: null })
          .where('id', '=', chunk.id)
          .where('lease_owner', '=', owner)
          .where('state', '=', 'running')
          .returning('id')
          .execute();
        if (updated.length === 0) return 'lost';
        if (!batch || batch.status === 'DONE' || batch.status === 'CANCELLED') return 'done';
        const counts = await liveCounts(trx, chunk.batch_id);
        if (counts.open > 0) return 'done';
        await trx
          .updateTable('batches')
          .set({ status: 'DONE', done: counts.done, failed: counts.failed, finished_at: now })
          .where('id', '=', chunk.batch_id)
          .execute();
        return 'batch-done';
      });
    },

    /** Gives a chunk back (shutdown, or a database fault) for any worker to take at `runAfter`. */
    async releaseChunk(chunk: BatchChunkRow, owner: string, runAfter: number): Promise<void> {
      // A lease that ends at `runAfter`: queued again at once when that is now.
      await db
        .updateTable('batch_chunks')
        .set({ state: 'running', lease_expires_at: runAfter - 1 })
        .where('id', '=', chunk.id)
        .where('lease_owner', '=', owner)
        .where('state', '=', 'running')
        .execute();
    },

    /** Up to `limit` items from position `from` on, in position order, finished or not. */
    async resultsPage(batchId: string, from: number, limit: number) {
      return (await resultsPage(db, batchId, from, limit)).rows;
    },
  };
}

export type BatchesRepository = ReturnType<typeof batchesRepository>;
