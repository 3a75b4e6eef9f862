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

    async profileBySubject(subject: string): Promise<{ id: number; handle: string } | undefined> {
      return db.selectFrom('profiles').select(['id', 'handle']).where('oauth_subject', '=', subject).executeTakeFirst();
    },

    /** Binds a subject to an unbound profile of this handle; the bound profile, or undefined when the handle's profile is someone else's. */
    async bindSubject(handleKey: string, subject: string): Promise<{ id: number; handle: string } | undefined> {
      await db.updateTable('profiles').set({ oauth_subject: subject }).where('handle_key', '=', handleKey).where('oauth_subject', 'is', null).execute();
      return db
        .selectFrom('profiles')
        .select(['id', 'handle'])
        .where('handle_key', '=', handleKey)
        .where('oauth_subject', '=', subject)
        .executeTakeFirst();
    },

    /** The secret waiting to be shown, cleared by whoever reads it first. */
    async takePendingSecret(id: number): Promise<string | null> {
      const row = await db.selectFrom('export_credentials').select('pending_secret').where('id', '=', id).executeTakeFirst();
      const secret = row?.pending_secret ?? null;
      if (secret === null) return null;
      const cleared = await db
        .updateTable('export_credentials')
        .set({ pending_secret: null })
        .where('id', '=', id)
        .where('pending_secret', '=', secret)
        .executeTakeFirst();
      return Number(cleared.numUpdatedRows) === 1 ? secret : null;
    },

    /** Replaces the profile's key and secret hash (new row id: the old key stops matching at once). */
    async replace(row: Insertable<ExportCredentialsTable>): Promise<void> {
      await db.transaction().execute(async (trx) => {
        await trx.deleteFrom('export_credentials').where('profile_id', '=', row.profile_id).execute();
        await trx.insertInto('export_credentials').values(row).execute();
      });
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
