import type { Db } from '../../db/connection.js';
import type { ApiKeysTable } from '../../db/tables/index.js';
import type { PermissionColumns } from './permissions.js';

export type ApiKeyRow = Omit<ApiKeysTable, 'id'> & { id: number };

export function apiKeysRepository(db: Db) {
  return {
    async insert(values: Omit<ApiKeyRow, 'id'>): Promise<ApiKeyRow> {
      return db.insertInto('api_keys').values(values).returningAll().executeTakeFirstOrThrow();
    },
    /** The hot path of every authenticated request: one indexed lookup. */
    async findByPrefix(prefix: string): Promise<ApiKeyRow | undefined> {
      return db.selectFrom('api_keys').selectAll().where('prefix', '=', prefix).executeTakeFirst();
    },
    async list(accountId?: number): Promise<ApiKeyRow[]> {
      let query = db.selectFrom('api_keys').selectAll().orderBy('id');
      if (accountId !== undefined) query = query.where('account_id', '=', accountId);
      return query.execute();
    },
    /** Changes the permissions of a live key; undefined when there is none (or it is revoked). */
    async setPermissions(prefix: string, columns: PermissionColumns): Promise<ApiKeyRow | undefined> {
      return db
        .updateTable('api_keys')
        .set(columns)
        .where('prefix', '=', prefix)
        .where('revoked_at', 'is', null)
        .returningAll()
        .executeTakeFirst();
    },
    async revoke(prefix: string, now: number): Promise<ApiKeyRow | undefined> {
      return db
        .updateTable('api_keys')
        .set({ revoked_at: now })
        .where('prefix', '=', prefix)
        .where('revoked_at', 'is', null)
        .returningAll()
        .executeTakeFirst();
    },
  };
}

export type ApiKeysRepository = ReturnType<typeof apiKeysRepository>;
