import type { Migration } from 'kysely';
import type { DialectName } from '../dialect.js';
import { foundation } from './0001-foundation.js';
import { scoring } from './0002-scoring.js';

/** Every migration in order. Names sort lexically; never rename or edit a shipped one. */
export function allMigrations(dialect: DialectName): Record<string, Migration> {
  return {
    '0001-foundation': foundation(dialect),
    '0002-scoring': scoring(dialect),
  };
}
