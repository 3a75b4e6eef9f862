import type { Insertable } from 'kysely';
import type { Db } from '../../db/connection.js';
import type { ExportCredentialsTable } from '../../db/tables/public-data.js';

export interface CredentialRow {
  id: number;
  profile_id: number;
  api_key: string;
  secret_hash: string;
  last_used_at: number | null;
}

export function exportCredentialsRepository(db: Db) {
  return {
    async findByKey(apiKey: string): Promise<CredentialRow | undefined> {
      return db
        .selectFrom('export_credentials')
        .select(['id', 'profile_id', 'api_key', 'secret_hash', 'last_used_at'])
        .where('api_key', '=', apiKey)
        .executeTakeFirst();
    },

    async findByProfile(profileId: number): Promise<CredentialRow | undefined> {
      return db
        .selectFrom('export_credentials')
        .select(['id', 'profile_id', 'api_key', 'secret_hash', 'last_used_at'])
        .where('profile_id', '=', profileId)
        .executeTakeFirst();
    },

    /** Inserts unless the profile has credentials already (a concurrent first call); true when inserted. */
    async insertIfAbsent(row: Insertable<ExportCredentialsTable>): Promise<boolean> {
      const inserted = await db
        .insertInto('export_credentials')
        .values(row)
        .onConflict((oc) => oc.column('profile_id').doNothing())
        .returning('id')
        .executeTakeFirst();
      return inserted !== undefined;
    },

    async touch(id: number, at: number): Promise<void> {
      await db.updateTable('export_credentials').set({ last_used_at: at }).where('id', '=', id).execute();
    },

    async deleteForProfile(profileId: number): Promise<number> {
      const result = await db.deleteFrom('export_credentials').where('profile_id', '=', profileId).executeTakeFirst();
      return Number(result.numDeletedRows);
    },

    async profileByHandleKey(key: string): Promise<{ id: number; handle: string } | undefined> {
      return db.selectFrom('profiles').select(['id', 'handle']).where('handle_key', '=', key).executeTakeFirst();
    },
  };
}

export type ExportCredentialsRepository = ReturnType<typeof exportCredentialsRepository>;
