import type { Selectable } from 'kysely';
import type { Database, Db } from '../db/connection.js';
import type { ScoreEventsTable, ScoreEventType } from '../db/tables/index.js';
import { AppError } from '../errors.js';
import type { AccountService } from '../scoring/accounts/accounts.service.js';
import { eventToV2Score, type V2Score } from '../scoring/scores/v2-scores.service.js';
import { formatScoringTimestamp } from '../scoring/timestamps.js';

type ScoreEventRow = Selectable<ScoreEventsTable>;

/** The body of a webhook and the `data` of a feed item: the v2 score object plus scorer_id, event_id and type. */
export type ScoreEventPayload = V2Score & { scorer_id: number; event_id: string; type: ScoreEventType };

export interface FeedItem {
  event_id: string;
  type: ScoreEventType;
  created_at: string;
  data: ScoreEventPayload;
}

/**
 * Reads of the score event log for webhooks and the event feed: both show an event the same way. A
 * `score.expiring` event repeats the score it warns about, so its `last_score_timestamp` is the time of the
 * latest `score.updated` event before it (the scoring that produced that score), not the warning's own time.
 */
export function scoreEventFeed(database: Database) {
  const { db } = database;

  async function render(rows: ScoreEventRow[], reader: Db = db): Promise<ScoreEventPayload[]> {
    // One at a time: a page holds up to 1000 rows, and a query per expiring row all at once would take
    // every pooled connection from other requests.
    const payloads: ScoreEventPayload[] = [];
    for (const row of rows) {
      let scoredAt = Number(row.created_at);
      if (row.type !== 'score.updated') {
        const scoring = await reader
          .selectFrom('score_events')
          .select('created_at')
          .where('scorer_id', '=', row.scorer_id)
          .where('address', '=', row.address)
          .where('type', '=', 'score.updated')
          .where('id', '<', row.id)
          .orderBy('id', 'desc')
          .limit(1)
          .executeTakeFirst();
        if (scoring) scoredAt = Number(scoring.created_at);
      }
      payloads.push({
        ...eventToV2Score({ ...row, created_at: scoredAt }),
        scorer_id: row.scorer_id,
        event_id: String(row.id),
        type: row.type,
      });
    }
    return payloads;
  }

  return {
    /** The webhook body of one stored event, or null when it is no longer stored. */
    async payload(eventId: number): Promise<ScoreEventPayload | null> {
      const row = await db.selectFrom('score_events').selectAll().where('id', '=', eventId).executeTakeFirst();
      return row ? ((await render([row]))[0] ?? null) : null;
    },

    /** Events of a scorer with an id above `after`, oldest first. */
    async page(scorerId: number, after: number, limit: number): Promise<FeedItem[]> {
      const rows = await db
        .selectFrom('score_events')
        .selectAll()
        .where('scorer_id', '=', scorerId)
        .where('id', '>', after)
        .orderBy('id')
        .limit(limit)
        .execute();
      const payloads = await render(rows);
      return rows.map((row, index) => ({
        event_id: String(row.id),
        type: row.type,
        created_at: formatScoringTimestamp(Number(row.created_at)),
        data: payloads[index] as ScoreEventPayload,
      }));
    },
  };
}

export type ScoreEventFeed = ReturnType<typeof scoreEventFeed>;

/** The event feed of the account's scorer: `next` is the path to poll for what follows. */
export function eventFeedService(feed: ScoreEventFeed, accounts: AccountService) {
  return {
    async events(accountId: number, scorerId: number, after: number, limit: number): Promise<{ items: FeedItem[]; next: string }> {
      const scorer = await accounts.scorerOfAccount(scorerId, accountId);
      if (!Number.isSafeInteger(after) || after < 0) throw new AppError('invalid_parameter', 'after must be an event id.');
      const items = await feed.page(scorer.id, after, limit);
      const last = items.at(-1)?.event_id ?? String(after);
      return { items, next: `/v2/scorers/${scorer.id}/events?after=${last}&limit=${limit}` };
    },
  };
}

export type EventFeedService = ReturnType<typeof eventFeedService>;
