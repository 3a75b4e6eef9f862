/** Tables of wallet sessions (Sign-In with Ethereum). */

/** Nonces handed out for Sign-In with Ethereum messages: single-use, expiring. */
export interface WalletSiweNoncesTable {
  nonce: string;
  created_at: number;
  expires_at: number;
  /** Set by the one sign-in that passed every check; a used nonce stays until it expires. */
  used_at: number | null;
}

/** Session tokens of signed-in wallets; only sha256(token) is stored. */
export interface WalletSessionsTable {
  /** Hex SHA-256 of the token. */
  token_hash: string;
  /** Lower-case address proven by the sign-in. */
  address: string;
  created_at: number;
  expires_at: number;
}

export interface WalletTables {
  wallet_siwe_nonces: WalletSiweNoncesTable;
  wallet_sessions: WalletSessionsTable;
}
