import { CompiledQuery } from 'kysely';
import type { DialectName } from '../../db/dialect.js';

/**
 * The JSON array of a list page, joined by SQLite from the stored texts (`bounty_bodies`) in one
 * statement: what `bountyListJsonOfBodies` writes, byte for byte, but without reading 100
 * strings of 1 KB into JavaScript, concatenating them and encoding the result to UTF-8 again
 * (together a third of an uncached list's CPU). The page's ids come as one array parameter.
 *
 * `ids` is the ids of the texts joined, in the order joined: the caller uses `body` only when it
 * equals the page's ids (comma-separated), which proves that every id had a stored text and that
 * the texts were joined in the walk's order; otherwise it renders the page itself (`bodiesOf`).
 * SQLite's `group_concat(… order by …)` sorts its 100 KB of input in a temporary b-tree (four times
 * the cost of the join), while the CROSS JOIN that keeps the array outermost visits the ids in array
 * order; the check makes that an observed fact rather than an assumption about the plan.
 *
 * SQLite answers the text as a BLOB, which better-sqlite3 hands over as a Buffer of the UTF-8
 * bytes (one copy). `concat` builds each bounty's text in one allocation, where a chain of `||`
 * copies it at each step.
 *
 * PostgreSQL has none: its `string_agg` of the page's 2 KB texts took 3–6 ms of the server
 * (measured on the benchmark's data, ordered or not), where reading the 50 rows takes 0.5–2 ms and
 * the client joins them in well under a millisecond; so a PostgreSQL page is joined in JavaScript.
 *
 * Parameters: the base URL as escaped inside a JSON string, the `now` JSON string, the ids.
 */
const PIECE = `concat('{"pk":', b.bounty_id, ',"url":"', $base, '/api/v0.1/bounties/?pk=', b.bounty_id, '"', b.head, ',"now":', $now, b.tail)`;

const SQLITE = `select cast(concat('[', group_concat(${PIECE}, ','), ']') as blob) as body, group_concat(b.bounty_id, ',') as ids
  from json_each($ids) as j cross join bounty_bodies as b on b.bounty_id = j.value`;

export interface PageJsonRow {
  body: Buffer;
  ids: string | null;
}

/** The statement of this dialect, given its parameters; null where the page is joined in JavaScript (PostgreSQL, see above). */
export function pageJsonQuery(dialect: DialectName): ((base: string, nowText: string, ids: number[]) => CompiledQuery<PageJsonRow>) | null {
  if (dialect !== 'sqlite') return null;
  // Each parameter appears once, in this order.
  const text = SQLITE.replace('$base', '?').replace('$now', '?').replace('$ids', '?');
  return (base, nowText, ids) => CompiledQuery.raw(text, [base, nowText, JSON.stringify(ids)]) as CompiledQuery<PageJsonRow>;
}
