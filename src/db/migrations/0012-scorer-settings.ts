import { type Kysely, type Migration, sql } from 'kysely';
import type { DialectName } from '../dialect.js';

/**
 * Scorer types are defined in code (src/scoring/scorers), so the database no longer lists them:
 * the check on `scorers.type` goes, and each scorer gets `settings`, the JSON object of its type's
 * own settings (`{}` for the weighted and binary scorers that existed before).
 *
 * SQLite cannot drop a check, so the table is rebuilt with foreign keys off (this migration runs
 * outside a transaction there): dropping the old table with them on would cascade into every
 * score, job and hold of every scorer.
 */
export function scorerSettings(dialect: DialectName): Migration {
  return {
    async up(db: Kysely<any>) {
      if (dialect === 'postgres') {
        await sql`alter table scorers drop constraint if exists scorers_type_check`.execute(db);
        await db.schema.alterTable('scorers').addColumn('settings', 'text', (c) => c.notNull().defaultTo('{}')).execute();
        return;
      }
      await sql`pragma foreign_keys = off`.execute(db);
      try {
        await sql`begin immediate`.execute(db);
        try {
          // The table as 0001 created it, minus the check: its own DDL, so every other column stays as it was.
          const created = await sql<{ sql: string }>`select sql from sqlite_master where type = 'table' and name = 'scorers'`.execute(db);
          const ddl = created.rows[0]?.sql ?? '';
          const rebuilt = ddl.replace(/\s+check\s*\(\s*type in \([^)]*\)\s*\)/i, '').replace(/^create table "scorers"/i, 'create table "scorers_rebuilt"');
          if (rebuilt === ddl || !rebuilt.startsWith('create table "scorers_rebuilt"')) throw new Error('unexpected scorers table definition');
          await sql.raw(rebuilt).execute(db);
          await sql`alter table scorers_rebuilt add column settings text not null default '{}'`.execute(db);
          await sql`
            insert into scorers_rebuilt (id, account_id, name, type, threshold, weights, requires_signature, created_at, updated_at)
            select id, account_id, name, type, threshold, weights, requires_signature, created_at, updated_at from scorers
          `.execute(db);
          await sql`drop table scorers`.execute(db);
          await sql`alter table scorers_rebuilt rename to scorers`.execute(db);
          await db.schema.createIndex('scorers_account_idx').on('scorers').column('account_id').execute();
          const broken = await sql`pragma foreign_key_check`.execute(db);
          if (broken.rows.length > 0) throw new Error('foreign keys broken by the scorers rebuild');
          await sql`commit`.execute(db);
        } catch (error) {
          await sql`rollback`.execute(db);
          throw error;
        }
      } finally {
        await sql`pragma foreign_keys = on`.execute(db);
      }
    },
  };
}
