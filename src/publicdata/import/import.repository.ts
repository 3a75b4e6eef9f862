import type { Kysely } from 'kysely';
import type { Db } from '../../db/connection.js';
import type { BountyPeopleTable } from '../../db/tables/bounty-vocabulary.js';
import { bountyBody } from '../bounties/bounty-json.js';
import type { BountiesTable, ContributionsTable, GrantRoundsTable, GrantsTable, ProfilesTable } from '../../db/tables/public-data.js';

/** Bind parameters per statement, below SQLite's 32766 and PostgreSQL's 65535. */
const MAX_PARAMETERS = 30_000;
const LOOKUP_CHUNK = 500;

function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

export interface UpsertCount {
  created: number;
  updated: number;
}

/**
 * Writes of `data import`: multi-row `insert … on conflict (key) do update`
 * (both databases), in batches sized to the bind-parameter limits.
 */
export function importRepository(db: Db) {
  // The generic upsert names its table and columns at run time.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the generic upsert names its table and columns at run time
  const anyDb = db as unknown as Kysely<any>;

  async function existingKeys(table: string, key: string, values: (string | number)[]): Promise<Set<string | number>> {
    const found = new Set<string | number>();
    for (const part of chunks(values, LOOKUP_CHUNK)) {
      const rows = await anyDb.selectFrom(table).select(key).where(key, 'in', part).execute();
      for (const row of rows) found.add(row[key] as string | number);
    }
    return found;
  }

  async function upsert<R extends object>(table: string, key: keyof R & string, rows: R[], keepOnUpdate: string[] = []): Promise<UpsertCount> {
    if (rows.length === 0) return { created: 0, updated: 0 };
    const existing = await existingKeys(table, key, rows.map((r) => r[key] as string | number));
    const columns = Object.keys(rows[0]!);
    const updated = columns.filter((c) => c !== key && !keepOnUpdate.includes(c));
    for (const part of chunks(rows, Math.max(1, Math.floor(MAX_PARAMETERS / columns.length)))) {
      await anyDb
        .insertInto(table)
        .values(part)
        .onConflict((oc) => oc.column(key).doUpdateSet((eb) => Object.fromEntries(updated.map((c) => [c, eb.ref(`excluded.${c}`)]))))
        .execute();
    }
    return { created: rows.length - existing.size, updated: existing.size };
  }

  return {
    upsertProfiles: (rows: Omit<ProfilesTable, 'id'>[]) => upsert('profiles', 'handle_key', rows, ['created_at']),
    upsertRounds: (rows: GrantRoundsTable[]) => upsert('grant_rounds', 'number', rows),
    upsertGrants: (rows: GrantsTable[]) => upsert('grants', 'id', rows),
    upsertContributions: (rows: ContributionsTable[]) => upsert('contributions', 'id', rows),
    /** Bounties with their stored JSON (`bounty_bodies`, migration 0020): every write of a bounty row goes through here. */
    async upsertBounties(rows: BountiesTable[]): Promise<UpsertCount> {
      const counts = await upsert('bounties', 'id', rows);
      await upsert('bounty_bodies', 'bounty_id', rows.map((row) => ({ bounty_id: row.id, ...bountyBody(row) })));
      return counts;
    },

    /** Replaces the interested workers and fulfillers of each given bounty. */
    async replaceBountyPeople(bountyIds: number[], rows: BountyPeopleTable[]): Promise<void> {
      for (const part of chunks(bountyIds, LOOKUP_CHUNK)) await db.deleteFrom('bounty_people').where('bounty_id', 'in', part).execute();
      for (const part of chunks(rows, 5000)) await db.insertInto('bounty_people').values(part).execute();
    },

    /** Replaces the team of each given grant. */
    async replaceTeams(teams: Map<number, number[]>): Promise<void> {
      const grantIds = [...teams.keys()];
      for (const part of chunks(grantIds, LOOKUP_CHUNK)) await db.deleteFrom('grant_team_members').where('grant_id', 'in', part).execute();
      const rows = [...teams].flatMap(([grantId, profileIds]) => [...new Set(profileIds)].map((profileId) => ({ grant_id: grantId, profile_id: profileId })));
      for (const part of chunks(rows, 5000)) await db.insertInto('grant_team_members').values(part).execute();
    },

    /** Profile ids by lower-case handle. */
    async profileIds(handleKeys: string[]): Promise<Map<string, number>> {
      const out = new Map<string, number>();
      for (const part of chunks([...new Set(handleKeys)], LOOKUP_CHUNK)) {
        const rows = await db.selectFrom('profiles').select(['id', 'handle_key']).where('handle_key', 'in', part).execute();
        for (const row of rows) out.set(row.handle_key, row.id);
      }
      return out;
    },

    async existingGrantIds(ids: number[]): Promise<Set<number>> {
      return (await existingKeys('grants', 'id', [...new Set(ids)])) as Set<number>;
    },

    async existingRoundNumbers(numbers: number[]): Promise<Set<number>> {
      return (await existingKeys('grant_rounds', 'number', [...new Set(numbers)])) as Set<number>;
    },

    /** Whether any public data is stored (the demo data set loads only into an empty database). */
    async isEmpty(): Promise<boolean> {
      for (const table of ['profiles', 'grants', 'bounties'] as const) {
        if (await db.selectFrom(table).select('id').limit(1).executeTakeFirst()) return false;
      }
      return true;
    },
  };
}

export type ImportRepository = ReturnType<typeof importRepository>;
