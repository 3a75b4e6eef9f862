import { type Selectable, sql } from 'kysely';
import { type Database, type Db, writeTransaction } from '../db/connection.js';
import { type DialectName, lockSkippingLocked, tryTransactionLock, tryTransactionLockOf } from '../db/dialect.js';
import type { WebhookDeliveriesTable } from '../db/tables/webhooks.js';
import type { AppendedScoreEvent } from '../events/score-event-sink.js';

export type DeliveryRow = Selectable<WebhookDeliveriesTable>;

/** A delivery leased to one worker, with what sending it needs from its endpoint. */
export interface ClaimedDelivery {
  delivery: DeliveryRow;
  endpoint: {
    id: number;
    scorerId: number;
    url: string;
    secretVersion: number;
    previousSecretVersion: number | null;
    previousSecretExpiresAt: number | null;
    failingSince: number | null;
  };
}

export interface AttemptRecord {
  delivered: boolean;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
}

export type SettledState = 'delivered' | 'failed' | 'dead' | 'lost';

const PENDING = ['queued', 'failed', 'running'] as const;
// The key space of the per-account locks a claim takes on PostgreSQL (the second key is the account id).
const ACCOUNT_CLAIM_LOCK_SPACE = 0x5748; // "WH"
// Candidates a claim looks at before it gives up for now (each further one only when another worker raced it).
const MOST_CLAIM_TRIES = 4;
const RUNNING = sql.lit('running' as const);

/** Attempts of the account's endpoints in flight now (running under a live lease), through the running index. */
async function inFlightOfAccount(trx: Db, accountId: number, now: number): Promise<number> {
  const { n } = await trx
    .selectFrom('webhook_deliveries as r')
    .innerJoin('webhook_endpoints as re', 're.id', 'r.endpoint_id')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('re.account_id', '=', accountId)
    .where('r.state', '=', RUNNING)
    .where('r.lease_expires_at', '>=', now)
    .executeTakeFirstOrThrow();
  return Number(n);
}

/**
 * The next delivery a claim should take (see claim), locked on PostgreSQL (rows other claims hold are skipped),
 * passing over the accounts in `passed`. One query: its work grows with the enabled endpoints, not the backlog.
 */
async function claimCandidate(trx: Db, dialect: DialectName, now: number, inFlightPerAccount: number, passed: readonly number[]) {
  let query = trx
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
    .select(['d.id', 'd.state', 'd.attempts', 'e.account_id'])
    // Each enabled endpoint's oldest pending delivery (its head), found through the pending index.
    .where('d.id', 'in', (eb) =>
      eb
        .selectFrom('webhook_endpoints as he')
        .select((eb) =>
          eb
            .selectFrom('webhook_deliveries as h')
            .select('h.id')
            .whereRef('h.endpoint_id', '=', 'he.id')
            .where('h.state', 'in', PENDING)
            .orderBy('h.event_id')
            .limit(1)
            .as('head'),
        )
        .where('he.enabled', '=', 1),
    )
    .where('d.next_attempt_at', '<=', now)
    .where((eb) => eb.or([eb('d.state', '!=', 'running'), eb('d.lease_expires_at', '<', now)]))
    // A manual retry can make an older delivery the head while a later one is still in flight.
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('webhook_deliveries as r')
            .select('r.id')
            .whereRef('r.endpoint_id', '=', 'd.endpoint_id')
            .where('r.state', '=', RUNNING)
            .where('r.lease_expires_at', '>=', now)
            .whereRef('r.id', '!=', 'd.id'),
        ),
      ),
    )
    // The account's attempts in flight, below its cap.
    .where(
      (eb) =>
        eb
          .selectFrom('webhook_deliveries as f')
          .innerJoin('webhook_endpoints as fe', 'fe.id', 'f.endpoint_id')
          .select((eb) => eb.fn.countAll().as('n'))
          .whereRef('fe.account_id', '=', 'e.account_id')
          .where('f.state', '=', RUNNING)
          .where('f.lease_expires_at', '>=', now),
      '<',
      inFlightPerAccount,
    )
    // Turns: the account served longest ago, then its endpoint served longest ago, then the due time.
    .orderBy((eb) =>
      eb
        .selectFrom('webhook_endpoints as t')
        .select((eb) => eb.fn.max('t.last_claim_turn').as('turn'))
        .whereRef('t.account_id', '=', 'e.account_id'),
    )
    .orderBy('e.last_claim_turn')
    .orderBy('d.next_attempt_at')
    .orderBy('d.id')
    .limit(1);
  if (passed.length > 0) query = query.where('e.account_id', 'not in', passed);
  // Only the delivery row is locked: the endpoint rows stay free for other claims and for settling.
  return (dialect === 'postgres' ? query.forUpdate(['d']).skipLocked() : query).executeTakeFirst();
}
// The key of the advisory lock that lets one dispatcher at a time move outbox rows (see dispatch).
const DISPATCH_LOCK_KEY = 0x57_45_42_48; // "WEBH"

/** Rows of the outbox per score event, in the transaction that appended the events (a ScoreEventSink). */
export async function insertOutboxRows(trx: Db, events: readonly AppendedScoreEvent[]): Promise<void> {
  // 1 000 rows of 4 parameters: well under either database's limit on parameters per statement.
  for (let first = 0; first < events.length; first += 1000) {
    await trx
      .insertInto('webhook_outbox')
      .values(events.slice(first, first + 1000).map((event) => ({ event_id: event.id, scorer_id: event.scorerId, event_type: event.type, created_at: event.createdAt })))
      .execute();
  }
}

/** The worker side of webhooks: outbox → deliveries, leases, attempts. */
export function deliveryQueueRepository(database: Database) {
  const { db, dialect } = database;
  return {
    /**
     * Moves up to `limit` outbox rows (oldest first) to one delivery per enabled endpoint of their scorer that
     * subscribes to the event's type, and removes them, in one transaction. One dispatcher runs at a time (a
     * PostgreSQL advisory lock; SQLite's single writer): two dispatchers taking interleaved outbox rows could
     * commit deliveries of a later event before an earlier one of the same endpoint. Returns the rows moved,
     * or null when another process was dispatching.
     */
    async dispatch(now: number, limit: number): Promise<number | null> {
      return writeTransaction(database, async (trx) => {
        if (!(await tryTransactionLock(dialect, trx, DISPATCH_LOCK_KEY))) return null;
        const rows = await lockSkippingLocked(
          dialect,
          trx.selectFrom('webhook_outbox').selectAll().orderBy('event_id').limit(limit),
        ).execute();
        if (rows.length === 0) return 0;
        const scorerIds = [...new Set(rows.map((row) => row.scorer_id))];
        const endpoints = await trx
          .selectFrom('webhook_endpoints')
          .select(['id', 'scorer_id', 'events'])
          .where('scorer_id', 'in', scorerIds)
          .where('enabled', '=', 1)
          .execute();
        const deliveries = rows.flatMap((row) =>
          endpoints
            .filter((endpoint) => endpoint.scorer_id === row.scorer_id && (JSON.parse(endpoint.events) as string[]).includes(row.event_type))
            .map((endpoint) => ({
              endpoint_id: endpoint.id,
              event_id: row.event_id,
              state: 'queued' as const,
              attempts: 0,
              next_attempt_at: now,
              event_created_at: row.created_at,
              created_at: now,
            })),
        );
        for (let start = 0; start < deliveries.length; start += 500) {
          await trx
            .insertInto('webhook_deliveries')
            .values(deliveries.slice(start, start + 500))
            .onConflict((oc) => oc.columns(['endpoint_id', 'event_id']).doNothing())
            .execute();
        }
        await trx.deleteFrom('webhook_outbox').where('event_id', 'in', rows.map((row) => row.event_id)).execute();
        return rows.length;
      });
    },

    /**
     * Leases the next due delivery: queued, waiting for its retry time, or running under an expired lease (its
     * worker died), of an enabled endpoint, that is the oldest pending event of its endpoint (per-endpoint order)
     * while no other attempt to that endpoint is in flight, of an account with fewer than `inFlightPerAccount`
     * attempts in flight (counted over every worker). Fair by turns: the account whose latest claim is oldest goes
     * first, within it the endpoint whose latest claim is oldest, and only then the due time, so a backlog of one
     * account (hanging endpoints, a burst of events) waits behind everyone else's next delivery instead of ahead
     * of it. PostgreSQL skips rows another claim holds, so two workers never take the same attempt, and the
     * account's count is taken again under a per-account lock, so concurrent workers cannot pass the cap together.
     * A delivery taken over from a dead worker gets an attempt row saying so.
     */
    async claim(owner: string, now: number, leaseMs: number, inFlightPerAccount: number): Promise<ClaimedDelivery | undefined> {
      return writeTransaction(database, async (trx) => {
        const passed: number[] = [];
        let candidate: { id: number; state: string; attempts: number; account_id: number } | undefined;
        for (let tries = 0; tries < MOST_CLAIM_TRIES && !candidate; tries++) {
          const found = await claimCandidate(trx, dialect, now, inFlightPerAccount, passed);
          if (!found) return undefined;
          // Another transaction claiming for this account holds the lock: its account is passed over this time.
          if (
            (await tryTransactionLockOf(dialect, trx, ACCOUNT_CLAIM_LOCK_SPACE, found.account_id)) &&
            (dialect === 'sqlite' || (await inFlightOfAccount(trx, found.account_id, now)) < inFlightPerAccount)
          ) {
            candidate = found;
          } else {
            passed.push(found.account_id);
          }
        }
        if (!candidate) return undefined;
        if (candidate.state === 'running') {
          await trx
            .insertInto('webhook_attempts')
            .values({
              delivery_id: candidate.id,
              attempt: candidate.attempts,
              status_code: null,
              duration_ms: 0,
              error: 'interrupted: the worker stopped during this attempt',
              created_at: now,
            })
            .execute();
        }
        const delivery = await trx
          .updateTable('webhook_deliveries')
          .set((eb) => ({ state: 'running', lease_owner: owner, lease_expires_at: now + leaseMs, attempts: eb('attempts', '+', 1) }))
          .where('id', '=', candidate.id)
          .returningAll()
          .executeTakeFirstOrThrow();
        const { turn } = await trx
          .selectFrom('webhook_endpoints')
          .select((eb) => eb(eb.fn.coalesce(eb.fn.max('last_claim_turn'), eb.lit(0)), '+', 1).as('turn'))
          .executeTakeFirstOrThrow();
        await trx.updateTable('webhook_endpoints').set({ last_claim_turn: Number(turn) }).where('id', '=', delivery.endpoint_id).execute();
        const endpoint = await trx
          .selectFrom('webhook_endpoints')
          .select(['id', 'scorer_id', 'url', 'secret_version', 'previous_secret_version', 'previous_secret_expires_at', 'failing_since'])
          .where('id', '=', delivery.endpoint_id)
          .executeTakeFirstOrThrow();
        return {
          delivery,
          endpoint: {
            id: endpoint.id,
            scorerId: endpoint.scorer_id,
            url: endpoint.url,
            secretVersion: endpoint.secret_version,
            previousSecretVersion: endpoint.previous_secret_version,
            previousSecretExpiresAt: endpoint.previous_secret_expires_at,
            failingSince: endpoint.failing_since,
          },
        };
      });
    },

    /**
     * Records an attempt in the delivery log and settles the delivery: delivered; failed with its retry at
     * `retryAt`; dead when `retryAt` is null. A failure starts the endpoint's failing period (or continues it);
     * `disableReason` disables the endpoint. `lost` when another worker took the lease meanwhile (the attempt
     * is still logged: it was made).
     */
    async settle(
      claim: ClaimedDelivery,
      owner: string,
      now: number,
      attempt: AttemptRecord,
      retryAt: number | null,
      disableReason: string | null,
    ): Promise<SettledState> {
      const { delivery } = claim;
      return writeTransaction(database, async (trx) => {
        let query = trx.selectFrom('webhook_deliveries').select(['state', 'lease_owner']).where('id', '=', delivery.id);
        if (dialect === 'postgres') query = query.forUpdate();
        const current = await query.executeTakeFirst();
        if (!current) return 'lost';
        await trx
          .insertInto('webhook_attempts')
          .values({
            delivery_id: delivery.id,
            attempt: delivery.attempts,
            status_code: attempt.statusCode,
            duration_ms: attempt.durationMs,
            error: attempt.error,
            created_at: now,
          })
          .execute();
        if (current.state !== 'running' || current.lease_owner !== owner) return 'lost';
        const released = { lease_owner: null, lease_expires_at: null };
        if (attempt.delivered) {
          await trx
            .updateTable('webhook_deliveries')
            .set({ ...released, state: 'delivered', delivered_at: now, last_error: null })
            .where('id', '=', delivery.id)
            .execute();
          // Attempts to one endpoint never overlap, so its failing period as seen at the claim is still current.
          if (claim.endpoint.failingSince !== null) {
            await trx.updateTable('webhook_endpoints').set({ failing_since: null }).where('id', '=', claim.endpoint.id).execute();
          }
          return 'delivered';
        }
        const state = retryAt === null ? ('dead' as const) : ('failed' as const);
        await trx
          .updateTable('webhook_deliveries')
          .set({ ...released, state, next_attempt_at: retryAt ?? now, last_error: attempt.error })
          .where('id', '=', delivery.id)
          .execute();
        await trx
          .updateTable('webhook_endpoints')
          .set((eb) => ({
            failing_since: eb.fn.coalesce('failing_since', eb.val(now)),
            ...(disableReason === null ? {} : { enabled: 0, disabled_reason: disableReason, updated_at: now }),
          }))
          .where('id', '=', claim.endpoint.id)
          .execute();
        return state;
      });
    },

    /** Removes settled deliveries (delivered or dead) settled before `before`, with their attempts; returns how many. */
    async pruneSettled(before: number, limit: number): Promise<number> {
      const result = await db
        .deleteFrom('webhook_deliveries')
        .where('id', 'in', (eb) =>
          eb
            .selectFrom('webhook_deliveries')
            .select('id')
            .where('state', 'in', ['delivered', 'dead'])
            .where((eb) => eb.fn.coalesce('delivered_at', 'next_attempt_at'), '<', before)
            .limit(limit),
        )
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },

    /** Epoch ms of the oldest event not yet delivered to an enabled endpoint (outbox or pending), or null. */
    async oldestUndeliveredAt(): Promise<number | null> {
      const outbox = await db.selectFrom('webhook_outbox').select((eb) => eb.fn.min('created_at').as('at')).executeTakeFirst();
      const pending = await db
        .selectFrom('webhook_deliveries as d')
        .innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
        .select((eb) => eb.fn.min('d.event_created_at').as('at'))
        .where('e.enabled', '=', 1)
        .where('d.state', 'in', PENDING)
        .executeTakeFirst();
      const times = [outbox?.at, pending?.at].filter((at): at is number => at !== null && at !== undefined).map(Number);
      return times.length === 0 ? null : Math.min(...times);
    },
  };
}

export type DeliveryQueueRepository = ReturnType<typeof deliveryQueueRepository>;
