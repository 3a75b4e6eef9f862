import { compiledOnce, type Db } from '../../db/connection.js';
import type { ScoresTable } from '../../db/tables/index.js';

export type ScoreRow = ScoresTable;

export interface ScoreListFilter {
  after?: number;
  atOrAfter?: number;
  address?: string;
  limit: number;
  offset: number;
}

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
      const [rows, total] = await Promise.all([
        page.execute(),
        base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
      ]);
      return { rows, count: Number(total.n) };
    },
  };
}

export type ScoresRepository = ReturnType<typeof scoresRepository>;
