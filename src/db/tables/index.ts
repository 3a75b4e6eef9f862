import type { Generated, Kysely } from 'kysely';
import type { PublicDataTables } from './public-data.js';
import type { StakingTables } from './staking.js';
import type { WalletTables } from './wallet.js';
import type { PortalTables } from './portal.js';
import type { WebhookTables } from './webhooks.js';
import type { BatchTables } from './batches.js';
import type { ModelTables } from './models.js';
import type { OnchainTables } from './onchain.js';

/**
 * Row shapes of every table. Conventions that hold on both databases:
 * times are epoch milliseconds (bigint), booleans are 0/1 integers, exact
 * decimals are text, and structured settings are JSON text.
 */

export interface AccountsTable {
  id: Generated<number>;
  name: string;
  created_at: number;
  /** Lower-case wallet address that owns the account (portal sign-in), or null (created by the CLI). */
  owner_address: string | null;
}

export interface ScorersTable {
  id: Generated<number>;
  account_id: number;
  name: string;
  /** A name of src/scoring/scorers/registry.ts. */
  type: string;
  threshold: string;
  /** JSON object provider → decimal string, overriding the catalogue's weights. */
  weights: string;
  /** JSON object: the type's own settings. */
  settings: string;
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
  /** 1 = the key may manage its account's scorers and keys (`create_scorers`). */
  can_create_scorers: number;
  /** 1 = the key may read score history (`historical_endpoint`); off unless granted. */
  can_read_history: number;
  revoked_at: number | null;
  created_at: number;
}

export interface NoncesTable {
  nonce: string;
  created_at: number;
  expires_at: number;
  used_at: number | null;
  /** The account whose API key asked for the nonce; only its submissions can consume it. */
  account_id: number | null;
}

export interface StampsTable {
  id: Generated<number>;
  address: string;
  provider: string;
  issuer: string;
  /** JSON array of strings. */
  nullifiers: string;
  digest: string;
  /** The credential exactly as received, JSON. */
  credential: string;
  issuance_date: number;
  expiration_date: number;
  created_at: number;
  updated_at: number;
  deleted_at: number | null;
  revoked_at: number | null;
}

export interface TrustedIssuersTable {
  did: string;
  note: string;
  created_at: number;
}

export type ScoreStatus = 'PROCESSING' | 'DONE' | 'ERROR';

export interface ScoresTable {
  scorer_id: number;
  address: string;
  status: ScoreStatus;
  score: string | null;
  /** JSON evidence object of threshold-type scorers. */
  evidence: string | null;
  error: string | null;
  last_score_timestamp: number;
  /** Epoch ms: the earliest expiry among the counted stamps; null when none counted or not scored yet. */
  expiration_date: number | null;
  /** JSON object provider → weight (5 fraction digits) of each counted stamp; null while PROCESSING. */
  stamp_scores: string | null;
  /** v2 fields (migration 0013), null until the row is first settled: the raw weighted sum, 5 dp. */
  raw_score?: string | null;
  /** 0/1: raw_score ≥ threshold. */
  passing?: number | null;
  /** The scorer's threshold when scored, 5 dp. */
  threshold?: string | null;
  /** JSON: the v2 per-stamp breakdown, provider → {score, dedup, expiration_date}. */
  stamps?: string | null;
  /** Id of the latest score.updated event of this (scorer, address). */
  event_id?: number | null;
}

export type ScoreEventType = 'score.updated' | 'score.expiring';

/** Append-only: rows are never updated or deleted (spec v2.md "Score events"). */
export interface ScoreEventsTable {
  id: Generated<number>;
  type: ScoreEventType;
  scorer_id: number;
  address: string;
  status: 'DONE' | 'ERROR';
  /** 5 dp; null on ERROR. */
  score: string | null;
  raw_score: string | null;
  passing: number;
  threshold: string | null;
  evidence: string | null;
  /** JSON: the v2 per-stamp breakdown. */
  stamps: string;
  expiration_date: number | null;
  error: string | null;
  created_at: number;
}

export interface NullifierHoldsTable {
  scorer_id: number;
  nullifier: string;
  address: string;
  expires_at: number;
}

export interface ScoringJobsTable {
  id: Generated<number>;
  scorer_id: number;
  address: string;
  state: 'queued' | 'running';
  /** Bumped by every submission; a run that finishes on an older generation runs again. */
  generation: number;
  claimed_generation: number | null;
  attempts: number;
  run_after: number;
  lease_owner: string | null;
  lease_expires_at: number | null;
  last_error: string | null;
  created_at: number;
}

/** A scoring worker's last look for work (its polling loop writes it). */
export interface ScoringWorkerHeartbeatsTable {
  /** The worker's lease owner, `host:pid:random`. */
  owner: string;
  seen_at: number;
}

/**
 * How many scores of a scorer have last_score_timestamp in an hour (`bucket` = the time / 3 600 000),
 * kept by triggers on `scores` (migration 0031); a bucket is the sum of its shards' `n`.
 */
export interface ScoreCountsTable {
  scorer_id: number;
  bucket: number;
  shard: number;
  n: number;
}

/** Scorers whose score_counts are complete (backfilled, or created after the triggers). */
export interface ScoreCountsReadyTable {
  scorer_id: number;
}

export interface Tables extends WalletTables, StakingTables, PublicDataTables, WebhookTables, BatchTables, PortalTables, ModelTables, OnchainTables {
  accounts: AccountsTable;
  scorers: ScorersTable;
  api_keys: ApiKeysTable;
  nonces: NoncesTable;
  stamps: StampsTable;
  trusted_issuers: TrustedIssuersTable;
  scores: ScoresTable;
  score_counts: ScoreCountsTable;
  score_counts_ready: ScoreCountsReadyTable;
  nullifier_holds: NullifierHoldsTable;
  scoring_jobs: ScoringJobsTable;
  scoring_worker_heartbeats: ScoringWorkerHeartbeatsTable;
  score_events: ScoreEventsTable;
}

/** A Kysely handle on every table: the pool, or a transaction inside it. */
export type Db = Kysely<Tables>;
