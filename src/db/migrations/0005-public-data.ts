import type { Kysely, Migration } from 'kysely';
import type { DialectName } from '../dialect.js';

export function publicData(dialect: DialectName): Migration {
  return {
    async up(db: Kysely<any>) {
      void db;
      void dialect;
    },
  };
}
