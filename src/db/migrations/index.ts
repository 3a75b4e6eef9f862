import type { Migration } from 'kysely';
import type { DialectName } from '../dialect.js';
import { foundation } from './0001-foundation.js';
import { scoring } from './0002-scoring.js';
import { walletSessions } from './0003-wallet-sessions.js';
import { staking } from './0004-staking.js';
import { publicData } from './0005-public-data.js';

/** Every migration in order. Names sort lexically; never rename or edit a shipped one. */
export function allMigrations(dialect: DialectName): Record<string, Migration> {
  return {
    '0001-foundation': foundation(dialect),
    '0002-scoring': scoring(dialect),
    '0003-wallet-sessions': walletSessions(dialect),
    '0004-staking': staking(dialect),
    '0005-public-data': publicData(dialect),
  };
}
