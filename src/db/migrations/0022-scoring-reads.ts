import { type Kysely, type Migration, sql } from 'kysely';
import type { DialectName } from '../dialect.js';

/**
 * The two reads of every scoring answered from an index alone. A stamp row stores its
 * credential (1–2 KB) before its dates and deletion marks, so reading the live stamps of an
 * address walked past every credential (on SQLite into overflow pages). The nullifier holds were
 * looked up one nullifier at a time, each hold's row read for its holder and expiry; the holds of
 * the address (a re-scored address has them all already) are now one index range. Each index
 * holds the columns its query reads; the stamps one only the live rows, which are the only ones
 * scored, and their (null) deletion marks too, since SQLite counts a partial index as covering
 * only when it holds its condition's columns.
 */
export function scoringReads(dialect: DialectName): Migration {
  void dialect;
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createIndex('stamps_live_scoring_idx')
        .on('stamps')
        .columns(['address', 'provider', 'issuer', 'nullifiers', 'issuance_date', 'expiration_date', 'id', 'deleted_at', 'revoked_at'])
        .where(sql.ref('deleted_at'), 'is', null)
        .where(sql.ref('revoked_at'), 'is', null)
        .execute();
      await db.schema
        .createIndex('nullifier_holds_address_idx')
        .on('nullifier_holds')
        .columns(['scorer_id', 'address', 'nullifier', 'expires_at'])
        .execute();
    },
  };
}
