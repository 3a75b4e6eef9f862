import type { Db } from '../../db/connection.js';
import type { ScorersTable } from '../../db/tables/index.js';

export type ScorerRow = Omit<ScorersTable, 'id'> & { id: number };

export function accountsRepository(db: Db) {
  return {
    async insertAccount(name: string, now: number, ownerAddress: string | null = null) {
      return db.insertInto('accounts').values({ name, created_at: now, owner_address: ownerAddress }).returningAll().executeTakeFirstOrThrow();
    },
    async findAccountByOwner(ownerAddress: string) {
      return db.selectFrom('accounts').selectAll().where('owner_address', '=', ownerAddress).executeTakeFirst();
    },
    async findAccount(id: number) {
      return db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
    },
    async countAccounts(): Promise<number> {
      const row = await db.selectFrom('accounts').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      return Number(row.n);
    },
    async listAccounts() {
      return db.selectFrom('accounts').selectAll().orderBy('id').execute();
    },
    async insertScorer(values: Omit<ScorerRow, 'id'>): Promise<ScorerRow> {
      return db.insertInto('scorers').values(values).returningAll().executeTakeFirstOrThrow();
    },
    async findScorer(id: number): Promise<ScorerRow | undefined> {
      return db.selectFrom('scorers').selectAll().where('id', '=', id).executeTakeFirst();
    },
    async listScorers(accountId?: number): Promise<ScorerRow[]> {
      let query = db.selectFrom('scorers').selectAll().orderBy('id');
      if (accountId !== undefined) query = query.where('account_id', '=', accountId);
      return query.execute();
    },
    async updateScorer(id: number, changes: Partial<Omit<ScorerRow, 'id' | 'account_id' | 'created_at'>>) {
      return db.updateTable('scorers').set(changes).where('id', '=', id).returningAll().executeTakeFirst();
    },
  };
}

export type AccountsRepository = ReturnType<typeof accountsRepository>;
