/**
 * Database snapshots for the abuse tests: row counts and checksums of every table, and a watch
 * that tells which tables a single request changed (a refused request must change none).
 */
import { createHash } from 'node:crypto';
import { type Kysely, sql } from 'kysely';

export interface TableState {
  rows: number;
  checksum: string;
}
export type DatabaseSnapshot = Record<string, TableState>;

const CHANGE_COUNTS = 'abuse_row_changes';

async function tablesOf(db: Kysely<any>): Promise<{ tables: string[]; dialect: 'sqlite' | 'postgres' }> {
  // On PostgreSQL the introspection lists every schema: keep the one this test runs in.
  let schema: string | undefined;
  try {
    schema = (await sql<{ s: string }>`select current_schema() as s`.execute(db)).rows[0]?.s;
  } catch {
    schema = undefined; // SQLite
  }
  const tables = (await db.introspection.getTables())
    .filter((t) => !t.isView && (schema === undefined || t.schema === schema) && t.name !== CHANGE_COUNTS)
    .map((t) => t.name)
    .sort();
  if (tables.length === 0) throw new Error('The database has no tables to watch.');
  return { tables, dialect: schema === undefined ? 'sqlite' : 'postgres' };
}

function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v));
}

async function tableState(db: Kysely<any>, name: string): Promise<TableState> {
  const rows = await db.selectFrom(name).selectAll().execute();
  const lines = rows.map(canonical).sort();
  return { rows: rows.length, checksum: createHash('sha256').update(lines.join('\n')).digest('hex').slice(0, 16) };
}

/** Row count and a checksum of the rows of every table (order-independent). */
export async function snapshotDatabase(db: Kysely<any>, only?: string[]): Promise<DatabaseSnapshot> {
  const names = only ?? (await tablesOf(db)).tables;
  return Object.fromEntries(await Promise.all(names.map(async (name) => [name, await tableState(db, name)] as const)));
}

/** The tables whose rows differ, described for a failure message. */
export function changedTables(before: DatabaseSnapshot, after: DatabaseSnapshot): string[] {
  const names = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  return names
    .filter((n) => before[n]?.rows !== after[n]?.rows || before[n]?.checksum !== after[n]?.checksum)
    .map((n) => `${n} (${before[n]?.rows ?? 'absent'} → ${after[n]?.rows ?? 'absent'} rows${before[n]?.rows === after[n]?.rows ? ', contents changed' : ''})`);
}

/**
 * Watches every table of a test database for changes, cheaply enough to look after every
 * request: triggers (in the test's own throw-away database) count the rows written per table,
 * in the writing transaction, so rolled-back writes do not count; a table whose count moved is
 * then read in full and compared with its last state, which also catches a write that restored
 * the table exactly.
 */
export class DatabaseWatch {
  private tables: string[] = [];
  private counts = new Map<string, number>();
  private states: DatabaseSnapshot = {};

  constructor(private readonly db: Kysely<any>) {}

  async install(): Promise<void> {
    const { tables, dialect } = await tablesOf(this.db);
    this.tables = tables;
    const id = (name: string) => `"${name.replace(/"/g, '""')}"`;
    const text = (value: string) => `'${value.replace(/'/g, "''")}'`;
    await sql.raw(`create table ${CHANGE_COUNTS} (t text primary key, n bigint not null)`).execute(this.db);
    for (const table of tables) await sql.raw(`insert into ${CHANGE_COUNTS} (t, n) values (${text(table)}, 0)`).execute(this.db);
    if (dialect === 'postgres') {
      await sql
        .raw(
          `create function ${CHANGE_COUNTS}_bump() returns trigger language plpgsql as $$ ` +
            `begin update ${CHANGE_COUNTS} set n = n + 1 where t = TG_TABLE_NAME; return null; end $$`,
        )
        .execute(this.db);
      for (const table of tables) {
        await sql
          .raw(`create trigger ${CHANGE_COUNTS} after insert or update or delete on ${id(table)} for each row execute function ${CHANGE_COUNTS}_bump()`)
          .execute(this.db);
      }
    } else {
      for (const table of tables) {
        for (const event of ['insert', 'update', 'delete']) {
          await sql
            .raw(
              `create trigger ${id(`${CHANGE_COUNTS}_${event}_${table}`)} after ${event} on ${id(table)} ` +
                `begin update ${CHANGE_COUNTS} set n = n + 1 where t = ${text(table)}; end`,
            )
            .execute(this.db);
        }
      }
    }
    this.counts = await this.readCounts();
    this.states = await snapshotDatabase(this.db, this.tables);
  }

  private async readCounts(): Promise<Map<string, number>> {
    const { rows } = await sql<{ t: string; n: number | string }>`select t, n from ${sql.table(CHANGE_COUNTS)}`.execute(this.db);
    return new Map(rows.map((r) => [r.t, Number(r.n)]));
  }

  /** The tables whose rows changed since the last call, described. */
  async changes(): Promise<string[]> {
    const counts = await this.readCounts();
    const moved = this.tables.filter((t) => counts.get(t) !== this.counts.get(t));
    this.counts = counts;
    if (moved.length === 0) return [];
    const now = await snapshotDatabase(this.db, moved);
    const before = Object.fromEntries(moved.map((t) => [t, this.states[t]!]));
    Object.assign(this.states, now);
    return changedTables(before, now);
  }
}
