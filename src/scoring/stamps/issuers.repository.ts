import type { Db } from '../../db/connection.js';

export function issuersRepository(db: Db) {
  return {
    async add(did: string, note: string, now: number): Promise<boolean> {
      const result = await db
        .insertInto('trusted_issuers')
        .values({ did, note, created_at: now })
        .onConflict((oc) => oc.column('did').doNothing())
        .executeTakeFirst();
      return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
    },
    async remove(did: string): Promise<boolean> {
      const result = await db.deleteFrom('trusted_issuers').where('did', '=', did).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
    async list() {
      return db.selectFrom('trusted_issuers').selectAll().orderBy('did').execute();
    },
  };
}

export type IssuersRepository = ReturnType<typeof issuersRepository>;
