import { type Database, writeTransaction } from '../../db/connection.js';
import type { ApiKeysTable } from '../../db/tables/index.js';
import type { PermissionColumns } from './permissions.js';

export type ApiKeyRow = Omit<ApiKeysTable, 'id'> & { id: number };

/** A key row with its account's tier (the highest tier among the account's live keys) and creation time. */
export type AuthenticatedKeyRow = ApiKeyRow & { account_tier: number | null; account_created_at: number };

/** What an account's budget is built from: its tier (null: no live key) and when it was created. */
export interface AccountBudgetRow {
  tier: number | null;
  createdAt: number;
}

export function apiKeysRepository(database: Database) {
  const { db, dialect } = database;
  return {
    /**
     * Inserts a key unless its account has `max` live keys already; null when it has. On PostgreSQL
     * the account row is locked first so that concurrent creations cannot both pass the count
     * (SQLite's write transactions run one at a time).
     */
    async insertWithin(max: number, values: Omit<ApiKeyRow, 'id'>): Promise<ApiKeyRow | null> {
      return writeTransaction(database, async (trx) => {
        if (dialect === 'postgres') {
          await trx.selectFrom('accounts').select('id').where('id', '=', values.account_id).forUpdate().execute();
        }
        const { n } = await trx
          .selectFrom('api_keys')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('account_id', '=', values.account_id)
          .where('revoked_at', 'is', null)
          .executeTakeFirstOrThrow();
        if (Number(n) >= max) return null;
        return trx.insertInto('api_keys').values(values).returningAll().executeTakeFirstOrThrow();
      });
    },
    async findByPrefix(prefix: string): Promise<ApiKeyRow | undefined> {
      return db.selectFrom('api_keys').selectAll().where('prefix', '=', prefix).executeTakeFirst();
    },
    /**
     * The hot path of every authenticated request on a key-cache miss: one indexed lookup, with
     * the account's tier from the account's live keys (indexed by account).
     */
    async findForAuthentication(prefix: string): Promise<AuthenticatedKeyRow | undefined> {
      return db
        .selectFrom('api_keys')
        .innerJoin('accounts', 'accounts.id', 'api_keys.account_id')
        .selectAll('api_keys')
        .select('accounts.created_at as account_created_at')
        .select((eb) =>
          eb
            .selectFrom('api_keys as live')
            .select((inner) => inner.fn.max('live.tier').as('tier'))
            .whereRef('live.account_id', '=', 'api_keys.account_id')
            .where('live.revoked_at', 'is', null)
            .as('account_tier'),
        )
        .where('api_keys.prefix', '=', prefix)
        .executeTakeFirst();
    },
    /** The highest tier among the account's live keys (null when it has none) and its creation time; undefined: no account. */
    async accountBudget(accountId: number): Promise<AccountBudgetRow | undefined> {
      const row = await db
        .selectFrom('accounts')
        .select('accounts.created_at')
        .select((eb) =>
          eb
            .selectFrom('api_keys')
            .select((inner) => inner.fn.max('api_keys.tier').as('tier'))
            .whereRef('api_keys.account_id', '=', 'accounts.id')
            .where('api_keys.revoked_at', 'is', null)
            .as('tier'),
        )
        .where('accounts.id', '=', accountId)
        .executeTakeFirst();
      if (!row) return undefined;
      return { tier: row.tier === null || row.tier === undefined ? null : Number(row.tier), createdAt: Number(row.created_at) };
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
