import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { type Database, type Db, writeStatement, writeTransaction } from '../db/connection.js';
import { lockSkippingLocked } from '../db/dialect.js';
import type { OnchainPushItemsTable, OnchainPushJobsTable, PushItemState } from '../db/tables/onchain.js';

export type PushJobRow = OnchainPushJobsTable;
export type PushItemRow = OnchainPushItemsTable;

/** The final states: an item in one of them is never touched again. */
export const finalStates: readonly PushItemState[] = ['attested', 'skipped', 'failed'];
const openStates: PushItemState[] = ['pending', 'sent'];

// Rows of one INSERT: SQLite binds at most 32,766 parameters a statement.
const insertRows = 500;

export interface NewPushJob {
  chainId: number;
  scorerId: number;
  accountId: number;
  sender: string;
  addresses: readonly string[];
  now: number;
  /** A batch the job waits for (its items are not worked before the batch has ended). */
  afterBatchId?: string | null;
}

export interface SignedSend {
  rawTx: string;
  txHash: string;
}

export type PushCounts = Record<PushItemState, number>;

function jobRow(row: PushJobRow): PushJobRow {
  return {
    ...row,
    chain_id: Number(row.chain_id),
    run_after: Number(row.run_after),
    created_at: Number(row.created_at),
    lease_expires_at: row.lease_expires_at == null ? null : Number(row.lease_expires_at),
    finished_at: row.finished_at == null ? null : Number(row.finished_at),
  };
}

function itemRow(row: PushItemRow): PushItemRow {
  return {
    ...row,
    sender_nonce: row.sender_nonce == null ? null : Number(row.sender_nonce),
    score_event_id: row.score_event_id == null ? null : Number(row.score_event_id),
    retry_at: Number(row.retry_at),
    finished_at: row.finished_at == null ? null : Number(row.finished_at),
  };
}

/**
 * The only writer of the push tables (`onchain_push_jobs`, `onchain_push_items`,
 * `onchain_push_sends`, `onchain_sender_nonces`). Nothing here talks to a chain: the worker
 * signs inside `storeSigned`'s transaction (local, no RPC) and broadcasts after it committed.
 */
export function pushRepository(database: Database) {
  const { db, dialect } = database;

  return {
    /** A job and its items, written in one transaction: a job is either whole or not there. */
    async create(job: NewPushJob): Promise<PushJobRow> {
      const id = `push_${randomBytes(12).toString('hex')}`;
      const row: PushJobRow = {
        id,
        chain_id: job.chainId,
        scorer_id: job.scorerId,
        account_id: job.accountId,
        sender: job.sender.toLowerCase(),
        total: job.addresses.length,
        status: 'queued',
        run_after: job.now,
        lease_owner: null,
        lease_expires_at: null,
        created_at: job.now,
        finished_at: null,
        after_batch_id: job.afterBatchId ?? null,
      };
      await writeTransaction(database, async (trx) => {
        await trx.insertInto('onchain_push_jobs').values(row).execute();
        for (let start = 0; start < job.addresses.length; start += insertRows) {
          const values = job.addresses.slice(start, start + insertRows).map((address, i) => ({
            job_id: id,
            position: start + i,
            address,
            state: 'pending' as const,
            attempts: 0,
            retry_at: 0,
          }));
          await trx.insertInto('onchain_push_items').values(values).execute();
        }
      });
      return row;
    },

    async job(id: string): Promise<PushJobRow | undefined> {
      const row = await db.selectFrom('onchain_push_jobs').selectAll().where('id', '=', id).executeTakeFirst();
      return row && jobRow(row);
    },

    /** Items of a job in list order, from `fromPosition`, at most `limit`. */
    async items(jobId: string, fromPosition: number, limit: number): Promise<PushItemRow[]> {
      const rows = await db
        .selectFrom('onchain_push_items')
        .selectAll()
        .where('job_id', '=', jobId)
        .where('position', '>=', fromPosition)
        .orderBy('position')
        .limit(limit)
        .execute();
      return rows.map(itemRow);
    },

    async counts(jobId: string): Promise<PushCounts> {
      const rows = await db
        .selectFrom('onchain_push_items')
        .select(['state', (eb) => eb.fn.countAll<number>().as('n')])
        .where('job_id', '=', jobId)
        .groupBy('state')
        .execute();
      const counts: PushCounts = { pending: 0, sent: 0, attested: 0, skipped: 0, failed: 0 };
      for (const row of rows) counts[row.state] = Number(row.n);
      return counts;
    },

    /** Leases the oldest due job of `sender` (queued, not leased or its lease run out). */
    async claimJob(owner: string, sender: string, now: number, leaseMs: number): Promise<PushJobRow | undefined> {
      const row = await writeStatement(database, (w) =>
        w
          .updateTable('onchain_push_jobs')
          .set({ lease_owner: owner, lease_expires_at: now + leaseMs })
          .where('id', '=', (eb) =>
            lockSkippingLocked(
              dialect,
              eb
                .selectFrom('onchain_push_jobs')
                .select('id')
                .where('status', '=', 'queued')
                .where('sender', '=', sender.toLowerCase())
                .where('run_after', '<=', now)
                .where((eb) => eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<', now)]))
                .orderBy('created_at')
                .orderBy('id')
                .limit(1),
            ),
          )
          .returningAll()
          .executeTakeFirst(),
      );
      return row && jobRow(row);
    },

    /** Queued jobs of `sender` (due or waiting for a batch): what a missing push worker would leave unsent. */
    async queuedJobs(sender: string): Promise<number> {
      const row = await db
        .selectFrom('onchain_push_jobs')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('status', '=', 'queued')
        .where('sender', '=', sender.toLowerCase())
        .executeTakeFirst();
      return Number(row?.n ?? 0);
    },

    /** Every item not yet worked on fails with `reason` (the batch the job waited for will never end as DONE). */
    async failPending(jobId: string, reason: string, now: number): Promise<void> {
      await writeStatement(database, (w) =>
        w.updateTable('onchain_push_items').set({ state: 'failed', reason, finished_at: now }).where('job_id', '=', jobId).where('state', '=', 'pending').execute(),
      );
    },

    /** Extends the lease; false when another worker took the job over. */
    async renewLease(jobId: string, owner: string, until: number): Promise<boolean> {
      const result = await writeStatement(database, (w) =>
        w.updateTable('onchain_push_jobs').set({ lease_expires_at: until }).where('id', '=', jobId).where('lease_owner', '=', owner).executeTakeFirst(),
      );
      return Number(result.numUpdatedRows) > 0;
    },

    /** Gives the job back, not to be claimed before `runAfter`. */
    async releaseJob(jobId: string, owner: string, runAfter: number): Promise<void> {
      await writeStatement(database, (w) =>
        w
          .updateTable('onchain_push_jobs')
          .set({ lease_owner: null, lease_expires_at: null, run_after: runAfter })
          .where('id', '=', jobId)
          .where('lease_owner', '=', owner)
          .execute(),
      );
    },

    /** Marks the job done once no item is open; false (nothing written) while one is. */
    async finishJob(jobId: string, owner: string, now: number): Promise<boolean> {
      return writeTransaction(database, async (trx) => {
        const open = await trx
          .selectFrom('onchain_push_items')
          .select('position')
          .where('job_id', '=', jobId)
          .where('state', 'in', openStates)
          .limit(1)
          .executeTakeFirst();
        if (open) return false;
        const result = await trx
          .updateTable('onchain_push_jobs')
          .set({ status: 'done', finished_at: now, lease_owner: null, lease_expires_at: null })
          .where('id', '=', jobId)
          .where('lease_owner', '=', owner)
          .executeTakeFirst();
        return Number(result.numUpdatedRows) > 0;
      });
    },

    /** Open items due at `now`, in list order. */
    async dueItems(jobId: string, now: number, limit: number): Promise<PushItemRow[]> {
      const rows = await db
        .selectFrom('onchain_push_items')
        .selectAll()
        .where('job_id', '=', jobId)
        .where('state', 'in', openStates)
        .where('retry_at', '<=', now)
        .orderBy('position')
        .limit(limit)
        .execute();
      return rows.map(itemRow);
    },

    /** When the next open item is due, or null when none is open. */
    async nextDue(jobId: string): Promise<number | null> {
      const row = await db
        .selectFrom('onchain_push_items')
        .select((eb) => eb.fn.min('retry_at').as('at'))
        .where('job_id', '=', jobId)
        .where('state', 'in', openStates)
        .executeTakeFirst();
      return row?.at == null ? null : Number(row.at);
    },

    /** Whether a transaction was already sent (or attested) for this score event. */
    async alreadySent(chainId: number, scorerId: number, address: string, scoreEventId: number): Promise<boolean> {
      const row = await db
        .selectFrom('onchain_push_sends')
        .select('job_id')
        .where('chain_id', '=', chainId)
        .where('scorer_id', '=', scorerId)
        .where('address', '=', address)
        .where('score_event_id', '=', scoreEventId)
        .executeTakeFirst();
      return row !== undefined;
    },

    /** Raises the counter of (chain, sender) to at least `pendingCount` (the chain's pending nonce). */
    async reconcileNonce(chainId: number, sender: string, pendingCount: number): Promise<void> {
      const key = sender.toLowerCase();
      await writeStatement(database, (w) =>
        w
          .insertInto('onchain_sender_nonces')
          .values({ chain_id: chainId, sender: key, next_nonce: pendingCount })
          .onConflict((oc) =>
            oc.columns(['chain_id', 'sender']).doUpdateSet({
              next_nonce: sql<number>`case when ${sql.ref('onchain_sender_nonces.next_nonce')} < ${pendingCount} then ${pendingCount} else ${sql.ref('onchain_sender_nonces.next_nonce')} end`,
            }),
          )
          .execute(),
      );
    },

    /**
     * In one transaction: claims (chain, scorer, address, score event), takes the sender's next
     * nonce, signs with it (`sign`, local) and stores the raw transaction, its hash and the nonce
     * in the item, which becomes `sent`. 'taken': another item holds the claim (the item is then
     * `skipped`, no nonce used).
     */
    async storeSigned(
      job: Pick<PushJobRow, 'id' | 'chain_id' | 'scorer_id' | 'sender'>,
      item: Pick<PushItemRow, 'position' | 'address'>,
      scoreEventId: number,
      now: number,
      sign: (nonce: number) => Promise<SignedSend>,
    ): Promise<{ nonce: number; signed: SignedSend } | 'taken'> {
      return writeTransaction(database, async (trx) => {
        const claimed = await trx
          .insertInto('onchain_push_sends')
          .values({ chain_id: job.chain_id, scorer_id: job.scorer_id, address: item.address, score_event_id: scoreEventId, job_id: job.id, position: item.position })
          .onConflict((oc) => oc.doNothing())
          .executeTakeFirst();
        if (Number(claimed.numInsertedOrUpdatedRows ?? 0n) === 0) {
          const holder = await trx
            .selectFrom('onchain_push_sends')
            .select(['job_id', 'position'])
            .where('chain_id', '=', job.chain_id)
            .where('scorer_id', '=', job.scorer_id)
            .where('address', '=', item.address)
            .where('score_event_id', '=', scoreEventId)
            .executeTakeFirst();
          // Held by this very item: another worker (which took the job over) is sending it.
          if (holder && !(holder.job_id === job.id && holder.position === item.position)) {
            await finish(trx, job.id, item.position, { state: 'skipped', score_event_id: scoreEventId }, now);
          }
          return 'taken' as const;
        }
        const counter = await trx
          .updateTable('onchain_sender_nonces')
          .set((eb) => ({ next_nonce: eb('next_nonce', '+', 1) }))
          .where('chain_id', '=', job.chain_id)
          .where('sender', '=', job.sender)
          .returning('next_nonce')
          .executeTakeFirst();
        if (!counter) throw new Error(`no nonce counter for chain ${job.chain_id} and ${job.sender}: reconcileNonce first`);
        const nonce = Number(counter.next_nonce) - 1;
        const signed = await sign(nonce);
        const stored = await trx
          .updateTable('onchain_push_items')
          .set({ state: 'sent', score_event_id: scoreEventId, sender_nonce: nonce, raw_tx: signed.rawTx, tx_hash: signed.txHash, reason: null })
          .where('job_id', '=', job.id)
          .where('position', '=', item.position)
          .where('state', '=', 'pending')
          .executeTakeFirst();
        // A nonce taken but held by no stored transaction would stall every later one: roll back.
        if (Number(stored.numUpdatedRows) !== 1) throw new Error(`push item ${job.id}#${item.position} changed while it was being signed`);
        return { nonce, signed };
      });
    },

    async markAttested(jobId: string, position: number, uid: string, now: number): Promise<void> {
      await writeStatement(database, (w) => finish(w, jobId, position, { state: 'attested', uid, reason: null }, now));
    },

    async markSkipped(jobId: string, position: number, scoreEventId: number | null, now: number): Promise<void> {
      await writeStatement(database, (w) => finish(w, jobId, position, { state: 'skipped', score_event_id: scoreEventId }, now));
    },

    /** Final failure; a sent transaction's claim is given up (nothing was attested, a later push may try again). */
    async markFailed(job: Pick<PushJobRow, 'id' | 'chain_id' | 'scorer_id'>, item: Pick<PushItemRow, 'position' | 'address' | 'score_event_id'>, reason: string, now: number): Promise<void> {
      await writeTransaction(database, async (trx) => {
        await finish(trx, job.id, item.position, { state: 'failed', reason }, now);
        await trx
          .deleteFrom('onchain_push_sends')
          .where('job_id', '=', job.id)
          .where('position', '=', item.position)
          .execute();
      });
    },

    /** A transient failure (RPC down, no receipt yet): the item stays as it is, due again at `retryAt`. */
    async retryLater(jobId: string, position: number, reason: string, retryAt: number): Promise<void> {
      await writeStatement(database, (w) =>
        w
          .updateTable('onchain_push_items')
          .set((eb) => ({ reason, retry_at: retryAt, attempts: eb('attempts', '+', 1) }))
          .where('job_id', '=', jobId)
          .where('position', '=', position)
          .where('state', 'in', openStates)
          .execute(),
      );
    },

    /**
     * A sent transaction whose nonce another transaction of the sender used: it can never be
     * mined, so the item starts over (a new score read, request and nonce) and its claim goes.
     */
    async restart(jobId: string, position: number): Promise<void> {
      await writeTransaction(database, async (trx) => {
        await trx
          .updateTable('onchain_push_items')
          .set({ state: 'pending', raw_tx: null, tx_hash: null, sender_nonce: null, score_event_id: null, retry_at: 0 })
          .where('job_id', '=', jobId)
          .where('position', '=', position)
          .where('state', '=', 'sent')
          .execute();
        await trx.deleteFrom('onchain_push_sends').where('job_id', '=', jobId).where('position', '=', position).execute();
      });
    },
  };
}

function finish(w: Db, jobId: string, position: number, fields: Partial<PushItemRow> & { state: PushItemState }, now: number) {
  return w
    .updateTable('onchain_push_items')
    .set({ ...fields, finished_at: now })
    .where('job_id', '=', jobId)
    .where('position', '=', position)
    .where('state', 'in', openStates)
    .execute();
}

export type PushRepository = ReturnType<typeof pushRepository>;
