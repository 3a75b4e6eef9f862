import type { Generated } from 'kysely';

/**
 * Row shapes of every table. Conventions that hold on both databases:
 * times are epoch milliseconds (bigint), booleans are 0/1 integers, exact
 * decimals are text, and structured settings are JSON text.
 */

export interface AccountsTable {
  id: Generated<number>;
  name: string;
  created_at: number;
}

export interface ScorersTable {
  id: Generated<number>;
  account_id: number;
  name: string;
  type: 'weighted' | 'binary';
  threshold: string;
  /** JSON object provider → decimal string, overriding the catalogue's weights. */
  weights: string;
  requires_signature: number;
  created_at: number;
  updated_at: number;
}

export interface ApiKeysTable {
  id: Generated<number>;
  account_id: number;
  prefix: string;
  key_hash: string;
  name: string;
  tier: number;
  can_submit: number;
  can_read: number;
  revoked_at: number | null;
  created_at: number;
}

export interface NoncesTable {
  nonce: string;
  created_at: number;
  expires_at: number;
  used_at: number | null;
}

export interface Tables {
  accounts: AccountsTable;
  scorers: ScorersTable;
  api_keys: ApiKeysTable;
  nonces: NoncesTable;
}
