import type { Selectable } from 'kysely';
import type { Database, Db } from '../db/connection.js';
import type { ScoreEventsTable, ScoreEventType } from '../db/tables/index.js';
import { AppError } from '../errors.js';
import type { AccountService } from '../scoring/accounts/accounts.service.js';
import { v2ScoreMembers } from '../scoring/scores/v2-score-json.js';
import { eventToV2Score, type V2Score } from '../scoring/scores/v2-scores.service.js';
import { formatScoringTimestamp } from '../scoring/timestamps.js';

/** The columns an event is shown with (not the v1 score and evidence, which the feed does not show). */
const FEED_COLUMNS = ['id', 'type', 'scorer_id', 'address', 'status', 'raw_score', 'passing', 'threshold', 'stamps', 'expiration_date', 'error', 'created_at'] as const;
type ScoreEventRow = Pick<Selectable<ScoreEventsTable>, (typeof FEED_COLUMNS)[number]>;

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

  /** When each row's score was produced: its own time, or for a warning the latest scoring before it. */
  async function scoredTimes(rows: ScoreEventRow[], reader: Db = db): Promise<number[]> {
    // One at a time: a page holds up to 1000 rows, and a query per expiring row all at once would take
    // every pooled connection from other requests.
    const times: number[] = [];
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
      times.push(scoredAt);
    }
    return times;
  }

  async function render(rows: ScoreEventRow[], reader: Db = db): Promise<ScoreEventPayload[]> {
    const times = await scoredTimes(rows, reader);
    return rows.map((row, index) => ({
      ...eventToV2Score({ ...row, created_at: times[index] as number }),
      scorer_id: row.scorer_id,
      event_id: String(row.id),
      type: row.type,
    }));
  }

  function pageRows(scorerId: number, after: number, limit: number): Promise<ScoreEventRow[]> {
    return db.selectFrom('score_events').select(FEED_COLUMNS).where('scorer_id', '=', scorerId).where('id', '>', after).orderBy('id').limit(limit).execute();
  }

  return {
    /** The webhook body of one stored event, or null when it is no longer stored. */
    async payload(eventId: number): Promise<ScoreEventPayload | null> {
      const row = await db.selectFrom('score_events').select(FEED_COLUMNS).where('id', '=', eventId).executeTakeFirst();
      return row ? ((await render([row]))[0] ?? null) : null;
    },

    /** Events of a scorer with an id above `after`, oldest first. */
    async page(scorerId: number, after: number, limit: number): Promise<FeedItem[]> {
      const rows = await pageRows(scorerId, after, limit);
      const payloads = await render(rows);
      return rows.map((row, index) => ({
        event_id: String(row.id),
        type: row.type,
        created_at: formatScoringTimestamp(Number(row.created_at)),
        data: payloads[index] as ScoreEventPayload,
      }));
    },

    /**
     * The same page as `page`, written as the JSON text of its items array. A page of 1000 events
     * built as objects and serialized spent most of its time parsing each stored `stamps` text and
     * writing it again; the text is copied as stored instead (v2ScoreJson), byte for byte what the
     * route's schema serializer writes for `page` (tested).
     */
    async pageJson(scorerId: number, after: number, limit: number): Promise<{ json: string; last: string | undefined }> {
      const rows = await pageRows(scorerId, after, limit);
      const times = await scoredTimes(rows);
      const parts: string[] = new Array(rows.length);
      for (let index = 0; index < rows.length; index += 1) {
        const row = rows[index] as ScoreEventRow;
        const id = String(row.id);
        const type = JSON.stringify(row.type);
        const createdAt = Number(row.created_at);
        const created = formatScoringTimestamp(createdAt);
        // A score.updated event's score was produced at the event's own time: one text for both.
        const scoredAt = times[index] as number;
        const scored = scoredAt === createdAt ? created : formatScoringTimestamp(scoredAt);
        parts[index] =
          `{"event_id":"${id}","type":${type},"created_at":"${created}","data":{${v2ScoreMembers(row, scored)}` +
          `,"scorer_id":${Number(row.scorer_id)},"event_id":"${id}","type":${type}}}`;
      }
      return { json: `[${parts.join(',')}]`, last: rows.length > 0 ? String(rows[rows.length - 1]!.id) : undefined };
    },
  };
}

export type ScoreEventFeed = ReturnType<typeof scoreEventFeed>;

/** The event feed of the account's scorer: `next` is the path to poll for what follows. */
export function eventFeedService(feed: ScoreEventFeed, accounts: AccountService) {
  async function scorerOf(accountId: number, scorerId: number, after: number): Promise<number> {
    const scorer = await accounts.scorerOfAccount(scorerId, accountId);
    if (!Number.isSafeInteger(after) || after < 0) throw new AppError('invalid_parameter', 'after must be an event id.');
    return scorer.id;
  }
  const nextPath = (scorerId: number, last: string, limit: number) => `/v2/scorers/${scorerId}/events?after=${last}&limit=${limit}`;

  return {
    async events(accountId: number, scorerId: number, after: number, limit: number): Promise<{ items: FeedItem[]; next: string }> {
      const id = await scorerOf(accountId, scorerId, after);
      const items = await feed.page(id, after, limit);
      return { items, next: nextPath(id, items.at(-1)?.event_id ?? String(after), limit) };
    },

    /** The body of `events` as JSON text, equal byte for byte to its schema serialization. */
    async eventsJson(accountId: number, scorerId: number, after: number, limit: number): Promise<string> {
      const id = await scorerOf(accountId, scorerId, after);
      const { json, last } = await feed.pageJson(id, after, limit);
      return `{"items":${json},"next":${JSON.stringify(nextPath(id, last ?? String(after), limit))}}`;
    },
  };
}

export type EventFeedService = ReturnType<typeof eventFeedService>;
