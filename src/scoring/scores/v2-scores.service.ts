import { type Database, type Db, writeTransaction } from '../../db/connection.js';
import type { ScoreEventsTable, ScoresTable } from '../../db/tables/index.js';
import { AppError } from '../../errors.js';
import { isScorerId } from '../accounts/accounts.service.js';
import { chunkOutcomes, type PassportScoringDeps, scorePassport } from '../jobs/passport-scoring.js';
import type { ScoringOutcome } from '../records/score-outcome.js';
import { formatScore, parseDecimal } from '../scorers/decimal.js';
import { formatScoringTimestamp, parseTimestampFilter } from '../timestamps.js';
import { type ChunkEntry, NullifierTaken, type ScoreRecordsRepository, type SettledScoring } from '../records/score-records.repository.js';
import type { ScoresRepository } from './scores.repository.js';
import type { V2Score } from './v2-score.schema.js';

export type { V2Score } from './v2-score.schema.js';

type V2Source = Pick<ScoresTable, 'address' | 'status' | 'error' | 'expiration_date' | 'raw_score' | 'passing' | 'threshold' | 'stamps'>;

/**
 * The v2 score object of a settled score row (or of an event, with its `created_at` as
 * `at`). An ERROR result shows score "0.00000", not passing, and its error.
 */
export function toV2Score(row: V2Source & { last_score_timestamp: number }): V2Score {
  return {
    address: row.address,
    score: row.status === 'DONE' ? (row.raw_score ?? '0.00000') : '0.00000',
    passing_score: row.status === 'DONE' && Number(row.passing) === 1,
    threshold: row.threshold ?? '0.00000',
    last_score_timestamp: formatScoringTimestamp(Number(row.last_score_timestamp)),
    expiration_timestamp: row.expiration_date == null ? null : formatScoringTimestamp(Number(row.expiration_date)),
    error: row.error,
    stamps: row.stamps ? (JSON.parse(row.stamps) as V2Score['stamps']) : {},
    points_data: null,
    possible_points_data: null,
  };
}

/** The v2 score object as recorded by a score event (history). */
export function eventToV2Score(event: Pick<ScoreEventsTable, 'address' | 'status' | 'error' | 'expiration_date' | 'raw_score' | 'passing' | 'threshold' | 'stamps' | 'created_at'>): V2Score {
  return toV2Score({ ...event, last_score_timestamp: Number(event.created_at) });
}

export interface ScoreNowOptions {
  /** Runs inside the write transaction, when there is one (`written: true`). */
  withinTransaction?: (trx: Db) => Promise<void>;
}

/** One address of a chunk: its answer, or the error that keeps it out of the chunk (it is scored alone). */
export type ChunkAnswer = ScoreNowResult | { error: Error };

export interface ScoreNowResult {
  /** The v2 score object (built on first access). */
  readonly score: V2Score;
  /** The score row it renders; `v2ScoreJson(row)` writes the same object as JSON text. */
  row: ScoresTable;
  /** False when the stored result was served unchanged and nothing was written. */
  written: boolean;
}

function answer(row: ScoresTable, written: boolean): ScoreNowResult {
  let score: V2Score | undefined;
  return {
    row,
    written,
    get score() {
      return (score ??= toV2Score(row));
    },
  };
}

/** Errors of the scorer's own settings: a scoring that fails the same way every time. */
function isSettingsError(error: unknown): boolean {
  const name = (error as Error)?.name;
  return name === 'ScoringInputError' || name === 'DecimalFormatError';
}

function sameAsStored(row: ScoresTable | undefined, settled: SettledScoring): row is ScoresTable {
  if (!row || row.event_id == null || row.status !== settled.status) return false;
  if (settled.status === 'ERROR') return row.error === settled.error && (row.threshold ?? null) === (settled.threshold ?? null);
  const o = settled.outcome;
  return (
    row.score === o.score &&
    row.raw_score === o.rawScore &&
    Number(row.passing) === (o.passing ? 1 : 0) &&
    row.threshold === o.threshold &&
    row.evidence === o.evidence &&
    row.stamp_scores === o.stampScores &&
    row.stamps === o.stamps &&
    (row.expiration_date == null ? null : Number(row.expiration_date)) === o.expirationDate &&
    row.error === null
  );
}

/** Every hold the result counts on is already the address's, with this expiry, and live. */
function holdsInPlace(outcome: ScoringOutcome, now: number): boolean {
  return outcome.claims.every((claim) => claim.heldAlready === true && claim.expiresAt > now);
}

const MAX_ATTEMPTS = 3;
const DAY_MS = 86_400_000;

/**
 * A history moment to epoch ms: a date alone (`2026-03-01`) means the end of that UTC day, a
 * date-time is read as the v1 timestamp filters are. Null when it is neither.
 */
export function parseHistoryMoment(raw: string): number | null {
  const text = raw.trim();
  if (/^\d{4}-\d{2}-\d{2}$/.test(text)) {
    const start = Date.parse(`${text}T00:00:00Z`);
    // Refuses dates that do not exist (2026-02-30), which Date.parse would roll over.
    if (Number.isNaN(start) || new Date(start).toISOString().slice(0, 10) !== text) return null;
    return start + DAY_MS - 1;
  }
  return parseTimestampFilter(text);
}

/**
 * v2 synchronous scoring: the same scorePassport and recordScoring as a v1 job, run in the
 * request. A queued v1 job of the same address is left alone: its later completion is a valid
 * scoring too.
 */
export function v2ScoreService(
  deps: PassportScoringDeps & {
    database: Database;
    scores: ScoresRepository;
    events: ScoreRecordsRepository;
    /** Announces written score rows to every process; awaited before the response. */
    scoresWritten?: (scorerId: number, addresses: readonly string[]) => Promise<void>;
  },
  clock: () => number = Date.now,
) {
  async function settle(scorerId: number, address: string, now: number): Promise<SettledScoring> {
    try {
      return { status: 'DONE', outcome: await scorePassport(deps, scorerId, address, now) };
    } catch (error) {
      if (!isSettingsError(error)) throw error;
      return { status: 'ERROR', error: `The scorer's settings cannot be used: ${(error as Error).message}.`, threshold: await knownThreshold(scorerId) };
    }
  }

  async function knownThreshold(scorerId: number): Promise<string | null> {
    try {
      return formatScore(parseDecimal((await deps.accounts.getScorer(scorerId)).threshold));
    } catch {
      return null;
    }
  }

  return {
    /**
     * scoreNow of many addresses of one scorer, with the outcome of scoring them one after the
     * other (chunkOutcomes), but with one read of each kind and one write transaction for the
     * chunk (chunk-recording.ts), in which `withinTransaction` runs with every answer (the batch's
     * items are finished with their scores). Duplicates share their answer. An address whose
     * scoring threw is answered with its error and left out. Throws NullifierTaken (nothing
     * written) when another address took a hold meanwhile: the caller scores the addresses one by one.
     */
    async scoreChunk(
      scorerId: number,
      accountId: number,
      addresses: readonly string[],
      withinTransaction: (trx: Db, answers: ReadonlyMap<string, ChunkAnswer>) => Promise<void>,
    ): Promise<Map<string, ChunkAnswer>> {
      if (!isScorerId(scorerId)) throw new AppError('scorer_not_found', `There is no scorer ${scorerId} for this API key.`);
      await deps.accounts.scorerOfAccount(scorerId, accountId);
      const distinct = [...new Set(addresses)];
      const now = clock();
      const [scorer, stamps, trusted, stored] = await Promise.all([
        deps.accounts.getScorer(scorerId),
        deps.stamps.liveForScoringOf(distinct),
        deps.issuers.current(),
        deps.events.rowsOf(deps.database.db, scorerId, distinct),
      ]);
      const nullifiers = [...new Set([...stamps.values()].flatMap((list) => list.flatMap((stamp) => stamp.nullifiers)))];
      const holds = await deps.stamps.holdsOfNullifiers(scorerId, nullifiers);
      const outcomes = chunkOutcomes({ scorer, trusted, catalogue: deps.catalogue, now, addresses: distinct, stamps, holds });
      const answers = new Map<string, ChunkAnswer>();
      const toWrite: ChunkEntry[] = [];
      let threshold: Promise<string | null> | undefined;
      for (const address of distinct) {
        const outcome = outcomes.get(address)!;
        let settled: SettledScoring;
        if (!(outcome instanceof Error)) settled = { status: 'DONE', outcome };
        else if (isSettingsError(outcome)) settled = { status: 'ERROR', error: `The scorer's settings cannot be used: ${outcome.message}.`, threshold: await (threshold ??= knownThreshold(scorerId)) };
        else {
          answers.set(address, { error: outcome });
          continue;
        }
        const row = stored.get(address);
        if (sameAsStored(row, settled) && (settled.status === 'ERROR' || holdsInPlace(settled.outcome, now))) answers.set(address, answer(row, false));
        else toWrite.push({ address, settled });
      }
      await writeTransaction(deps.database, async (trx) => {
        const rows = await deps.events.recordScorings(trx, scorerId, toWrite, now);
        for (const [address, row] of rows) answers.set(address, answer(row, true));
        await withinTransaction(trx, answers);
      });
      await deps.scoresWritten?.(scorerId, toWrite.map((entry) => entry.address));
      return answers;
    },

    /**
     * The v2 score of `address` as it was at `createdAt` (see parseHistoryMoment): the latest
     * score.updated event at or before it. Never scores.
     */
    async scoreAt(scorerId: number, accountId: number, address: string, createdAt: string): Promise<V2Score> {
      if (!isScorerId(scorerId)) throw new AppError('scorer_not_found', `There is no scorer ${scorerId} for this API key.`);
      const at = parseHistoryMoment(createdAt);
      if (at === null) {
        throw new AppError('invalid_timestamp', 'created_at must be an ISO 8601 date (2026-03-01) or date-time (2026-03-01T12:00:00+00:00).');
      }
      await deps.accounts.scorerOfAccount(scorerId, accountId);
      const event = await deps.events.scoreAt(deps.database.db, scorerId, address, at);
      if (!event) {
        throw new AppError('score_not_found', `There is no score of ${address} for scorer ${scorerId} at or before ${formatScoringTimestamp(at)}.`, {}, { address });
      }
      return eventToV2Score(event);
    },

    /**
     * Scores `address` for the account's scorer now and records the result exactly as a v1
     * submission would; when nothing changed (same result, every hold in place) the stored row
     * is served and nothing is written. `address` must be a valid address in lower case.
     */
    async scoreNow(scorerId: number, accountId: number, address: string, options: ScoreNowOptions = {}): Promise<ScoreNowResult> {
      if (!isScorerId(scorerId)) throw new AppError('scorer_not_found', `There is no scorer ${scorerId} for this API key.`);
      await deps.accounts.scorerOfAccount(scorerId, accountId);
      for (let attempt = 1; ; attempt++) {
        const now = clock();
        const [stored, settled] = await Promise.all([deps.scores.find(scorerId, address), settle(scorerId, address, now)]);
        if (sameAsStored(stored, settled) && (settled.status === 'ERROR' || holdsInPlace(settled.outcome, now))) {
          return answer(stored, false);
        }
        try {
          const { row } = await writeTransaction(deps.database, (trx) =>
            deps.events.recordScoring(trx, scorerId, address, settled, now, { withinTransaction: options.withinTransaction }),
          );
          await deps.scoresWritten?.(scorerId, [address]);
          return answer(row, true);
        } catch (error) {
          // Another address took a nullifier between scoring and recording: score again, as a job would.
          if (!(error instanceof NullifierTaken) || attempt >= MAX_ATTEMPTS) throw error;
        }
      }
    },
  };
}

export type V2ScoreService = ReturnType<typeof v2ScoreService>;
