/** Tables of the developer portal: sign-in nonces, sessions and API-key usage. */

/** Nonces handed out for the portal's Sign-In with Ethereum messages: single-use, expiring. */
export interface PortalSiweNoncesTable {
  nonce: string;
  created_at: number;
  expires_at: number;
  used_at: number | null;
}

/** Portal sessions (the cookie's token); only sha256(token) is stored. */
export interface PortalSessionsTable {
  token_hash: string;
  account_id: number;
  /** Lower-case address that signed in: the account's owner. */
  address: string;
  created_at: number;
  expires_at: number;
}

/** Requests and 429 answers of an API key on one UTC day (days since 1970-01-01). */
export interface KeyUsageDailyTable {
  key_id: number;
  day: number;
  requests: number;
  rate_limited: number;
}

export interface PortalTables {
  portal_siwe_nonces: PortalSiweNoncesTable;
  portal_sessions: PortalSessionsTable;
  key_usage_daily: KeyUsageDailyTable;
}
