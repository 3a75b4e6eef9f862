import type { SelectQueryBuilder } from 'kysely';
import { compiledOnce, type Db } from '../../db/connection.js';
import type { ScoresTable, Tables } from '../../db/tables/index.js';

export type ScoreRow = ScoresTable;

export interface ScoreListFilter {
  after?: number;
  atOrAfter?: number;
  address?: string;
  limit: number;
  offset: number;
}

type FilteredScores = SelectQueryBuilder<Tables, 'scores', object>;

/**
 * The hour of score_counts' buckets: migration 0031 writes `last_score_timestamp / 3 600 000`, and
 * a migration's value never changes once shipped (score-counts.test.ts checks they are equal).
 */
export const SCORE_COUNT_BUCKET_MS = 3_600_000;

export function scoresRepository(db: Db) {
  // The hot reads: the single-score read and a waiting submission's look at its row.
  const scoreForAccountQuery = compiledOnce((db: Db, scorerId: number, accountId: number, address: string) =>
    db
      .selectFrom('scorers as sc')
      .leftJoin('scores as s', (join) => join.onRef('s.scorer_id', '=', 'sc.id').on('s.address', '=', address))
      .select([
        's.address',
        's.status',
        's.score',
        's.evidence',
        's.error',
        's.last_score_timestamp',
        's.scorer_id',
        's.expiration_date',
        's.stamp_scores',
        's.raw_score',
        's.passing',
        's.threshold',
        's.stamps',
        's.event_id',
      ])
      .where('sc.id', '=', scorerId)
      .where('sc.account_id', '=', accountId),
  );

  const scoreQuery = compiledOnce((db: Db, scorerId: number, address: string) =>
    db.selectFrom('scores').selectAll().where('scorer_id', '=', scorerId).where('address', '=', address),
  );

  // Scorers seen with a complete summary: one stays complete from then on (migration 0031).
  const readyScorers = new Set<number>();

  /**
   * The list's count. An address filter is one primary-key lookup, counted as it is. Otherwise the
   * filter is a lower bound L on last_score_timestamp (a whole number of ms: `> t` is `>= floor(t) + 1`):
   * the rows of L's own hour are counted from the index (at most an hour of scorings), every later
   * hour is summed from score_counts. A scorer whose summary is not complete yet (the migration's
   * backfill is under way) is counted from the index, as is a bound outside the safe integers.
   */
  async function countOf(scorerId: number, filter: ScoreListFilter, base: FilteredScores): Promise<number> {
    const plain = async () => Number((await base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
    if (filter.address !== undefined) return plain();
    const bounds = [
      ...(filter.after !== undefined ? [Math.floor(filter.after) + 1] : []),
      ...(filter.atOrAfter !== undefined ? [Math.ceil(filter.atOrAfter)] : []),
    ];
    const lower = bounds.length > 0 ? Math.max(...bounds) : undefined;
    if (lower !== undefined && !Number.isSafeInteger(lower)) return plain();
    const firstWhole = lower === undefined ? undefined : Math.floor(lower / SCORE_COUNT_BUCKET_MS) + 1;
    const known = readyScorers.has(scorerId);
    const row = await db
      .selectNoFrom((eb) => [
        (known ? eb.lit(1) : eb.selectFrom('score_counts_ready').select((e) => e.fn.countAll().as('r')).where('scorer_id', '=', scorerId)).as('ready'),
        (firstWhole === undefined
          ? eb.lit(0)
          : base.where('last_score_timestamp', '<', firstWhole * SCORE_COUNT_BUCKET_MS).select((e) => e.fn.countAll().as('e'))
        ).as('edge'),
        eb
          .selectFrom('score_counts')
          .select((e) => e.fn.coalesce(e.fn.sum('n'), e.lit(0)).as('s'))
          .where('scorer_id', '=', scorerId)
          .$if(firstWhole !== undefined, (q) => q.where('bucket', '>=', firstWhole as number))
          .as('rest'),
      ])
      .executeTakeFirstOrThrow();
    if (Number(row.ready) === 0) return plain();
    readyScorers.add(scorerId);
    return Number(row.edge) + Number(row.rest);
  }

  return {
    /**
     * The single-score read in one query: whether the scorer exists for the
     * account (`scorerFound`) and, if the address was submitted, its row.
     */
    async findForAccount(scorerId: number, accountId: number, address: string) {
      const [row] = (await scoreForAccountQuery(db, scorerId, accountId, address)).rows;
      if (!row) return { scorerFound: false as const };
      return { scorerFound: true as const, score: row.address === null ? null : (row as ScoreRow) };
    },

    async find(scorerId: number, address: string): Promise<ScoreRow | undefined> {
      return (await scoreQuery(db, scorerId, address)).rows[0];
    },

    /**
     * A page of the score list and its count. The page walks the index (scorer_id,
     * last_score_timestamp, address); a sync (last_score_timestamp_gt with offset 0) sends no OFFSET.
     */
    async list(scorerId: number, filter: ScoreListFilter): Promise<{ rows: ScoreRow[]; count: number }> {
      let base = db.selectFrom('scores').where('scorer_id', '=', scorerId);
      if (filter.after !== undefined) base = base.where('last_score_timestamp', '>', filter.after);
      if (filter.atOrAfter !== undefined) base = base.where('last_score_timestamp', '>=', filter.atOrAfter);
      if (filter.address !== undefined) base = base.where('address', '=', filter.address);
      let page = base.selectAll().orderBy('last_score_timestamp').orderBy('address').limit(filter.limit);
      if (filter.offset > 0) page = page.offset(filter.offset);
      const [rows, count] = await Promise.all([page.execute(), countOf(scorerId, filter, base)]);
      return { rows, count };
    },
  };
}

export type ScoresRepository = ReturnType<typeof scoresRepository>;
