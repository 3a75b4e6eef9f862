import { sql } from 'kysely';
import type { Db } from '../../db/connection.js';
import { type DialectName, isOneOf, lockScoreEventLog, scorerIdForPlanner } from '../../db/dialect.js';
import type { ScoresTable } from '../../db/tables/index.js';
import type { ScoreEventSink } from '../../events/score-event-sink.js';
import { differsFromEvent, holdsToWrite, NullifierTaken, type SettledScoring, settledColumns } from './settled-scoring.js';

// Part of the score record (score-records.repository.ts, the only writer of scores, score_events
// and nullifier_holds): recordScoring's write path for many addresses of one scorer at once (a
// batch chunk), in a few multi-row statements instead of five to seven statements per address.

/** Rows per multi-row statement: well under SQLite's 32 766 and PostgreSQL's 65 535 parameters. */
const ROWS_PER_STATEMENT = 200;

export interface ChunkEntry {
  address: string;
  settled: SettledScoring;
}

function* piecesOf<T>(items: readonly T[], size = ROWS_PER_STATEMENT): Generator<T[]> {
  for (let first = 0; first < items.length; first += size) yield items.slice(first, first + size);
}

/**
 * recordScoring of distinct addresses of one scorer, in `trx`, with the same outcome as recording
 * them one after the other: holds first (NullifierTaken when another address took one; the caller
 * rolls back and records them one by one), then the rows (their locks order concurrent
 * recordings of an address, as recordScoring's do), then the latest event of each, then one event
 * for each result that differs from it, heard by the sinks in id order. Returns the rows written.
 */
export function chunkRecording(dialect: DialectName, sinks: readonly ScoreEventSink[]) {
  async function takeHolds(trx: Db, scorerId: number, entries: readonly ChunkEntry[], now: number): Promise<void> {
    const claims = entries.flatMap((entry) =>
      entry.settled.status === 'DONE'
        ? holdsToWrite(entry.settled.outcome, now).map((claim) => ({ scorer_id: scorerId, nullifier: claim.nullifier, address: entry.address, expires_at: claim.expiresAt }))
        : [],
    );
    for (const piece of piecesOf(claims)) {
      const taken = await trx
        .insertInto('nullifier_holds')
        .values(piece)
        .onConflict((oc) =>
          oc
            .columns(['scorer_id', 'nullifier'])
            .doUpdateSet((eb) => ({ address: eb.ref('excluded.address'), expires_at: eb.ref('excluded.expires_at') }))
            .where((eb) => eb.or([eb('nullifier_holds.address', '=', eb.ref('excluded.address')), eb('nullifier_holds.expires_at', '<=', now)])),
        )
        .returning('nullifier')
        .execute();
      if (taken.length !== piece.length) throw new NullifierTaken();
    }
  }

  async function writeRows(trx: Db, scorerId: number, entries: readonly ChunkEntry[], now: number): Promise<Map<string, ScoresTable>> {
    const rows = new Map<string, ScoresTable>();
    for (const piece of piecesOf(entries)) {
      const written = await trx
        .insertInto('scores')
        .values(piece.map((entry) => ({ scorer_id: scorerId, address: entry.address, ...settledColumns(entry.settled), last_score_timestamp: now, event_id: null })))
        .onConflict((oc) =>
          oc.columns(['scorer_id', 'address']).doUpdateSet((eb) => ({
            status: eb.ref('excluded.status'),
            score: eb.ref('excluded.score'),
            raw_score: eb.ref('excluded.raw_score'),
            passing: eb.ref('excluded.passing'),
            threshold: eb.ref('excluded.threshold'),
            evidence: eb.ref('excluded.evidence'),
            stamp_scores: eb.ref('excluded.stamp_scores'),
            stamps: eb.ref('excluded.stamps'),
            expiration_date: eb.ref('excluded.expiration_date'),
            error: eb.ref('excluded.error'),
            last_score_timestamp: eb.ref('excluded.last_score_timestamp'),
          })),
        )
        .returningAll()
        .execute();
      for (const row of written) rows.set(row.address, row as ScoresTable);
    }
    if (rows.size !== entries.length) throw new Error('a score row was not written');
    return rows;
  }

  async function latestEvents(trx: Db, scorerId: number, addresses: readonly string[]) {
    const latest = new Map<string, Awaited<ReturnType<typeof latestPiece>>[number]>();
    for (const piece of piecesOf(addresses)) for (const event of await latestPiece(trx, scorerId, piece)) latest.set(event.address, event);
    return latest;
  }

  function latestPiece(trx: Db, scorerId: number, addresses: readonly string[]) {
    return trx
      .selectFrom('score_events')
      .selectAll()
      .where('id', 'in', (eb) =>
        eb
          .selectFrom('score_events')
          .select((eb) => eb.fn.max('id').as('id'))
          .where('scorer_id', '=', scorerIdForPlanner(dialect, scorerId))
          .where(isOneOf(dialect, 'address', addresses))
          .where('type', '=', 'score.updated')
          .groupBy('address'),
      )
      .execute();
  }

  async function setEventIds(trx: Db, scorerId: number, eventIds: ReadonlyMap<string, number>): Promise<void> {
    for (const piece of piecesOf([...eventIds])) {
      const cases = sql.join(piece.map(([address, id]) => sql`when ${address} then cast(${id} as bigint)`), sql` `);
      await trx
        .updateTable('scores')
        .set({ event_id: sql<number>`case address ${cases} end` })
        .where('scorer_id', '=', scorerIdForPlanner(dialect, scorerId))
        .where(isOneOf(dialect, 'address', piece.map(([address]) => address)))
        .execute();
    }
  }

  return async function recordScorings(trx: Db, scorerId: number, entries: readonly ChunkEntry[], now: number): Promise<Map<string, ScoresTable>> {
    if (entries.length === 0) return new Map();
    await takeHolds(trx, scorerId, entries, now);
    const rows = await writeRows(trx, scorerId, entries, now);
    const latest = await latestEvents(trx, scorerId, entries.map((entry) => entry.address));
    const eventIds = new Map<string, number>();
    const toAppend = entries.filter((entry) => {
      const event = latest.get(entry.address);
      if (differsFromEvent(settledColumns(entry.settled), event)) return true;
      if (rows.get(entry.address)!.event_id == null && event) eventIds.set(entry.address, Number(event.id));
      return false;
    });
    if (toAppend.length > 0) {
      await lockScoreEventLog(dialect, trx, scorerId);
      const appended: { id: number; address: string }[] = [];
      for (const piece of piecesOf(toAppend)) {
        const values = piece.map((entry) => {
          const { stamp_scores: _v1Only, ...eventColumns } = settledColumns(entry.settled);
          return { type: 'score.updated' as const, scorer_id: scorerId, address: entry.address, ...eventColumns, created_at: now };
        });
        for (const row of await trx.insertInto('score_events').values(values).returning(['id', 'address']).execute()) appended.push({ id: Number(row.id), address: row.address });
      }
      appended.sort((a, b) => a.id - b.id);
      // Every event reaches its listeners (the webhook outbox) in its transaction, in log order.
      for (const event of appended) eventIds.set(event.address, event.id);
      const heard = appended.map((event) => ({ id: event.id, scorerId, type: 'score.updated', createdAt: now }));
      for (const sink of sinks) await sink(trx, heard);
    }
    await setEventIds(trx, scorerId, eventIds);
    for (const [address, id] of eventIds) rows.get(address)!.event_id = id;
    return rows;
  };
}
