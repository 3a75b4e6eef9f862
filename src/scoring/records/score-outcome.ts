/** What a scoring produced for one address, before it is recorded (scorePassport fills every field). */
export interface ScoringOutcome {
  score: string;
  evidence: string | null;
  /** Epoch ms: the earliest expiry among the counted stamps, null when none counted. */
  expirationDate: number | null;
  /** JSON object provider → 5-dp weight of each counted stamp (`{}` when none). */
  stampScores: string;
  /**
   * Nullifiers the counted stamps hold for this address, until the stamp expires; `heldAlready`
   * when the address held it, with this expiry, as the score was computed.
   */
  claims: { nullifier: string; expiresAt: number; heldAlready?: boolean }[];
  // The v2 fields: scorePassport always fills them; they are optional only for hand-made
  // outcomes (tests of the job queue), which record score as raw score, not passing, no stamps.
  /** The raw weighted sum, five fraction digits (the v2 `score`, whatever the scorer type). */
  rawScore?: string;
  /** rawScore ≥ threshold, compared exactly. */
  passing?: boolean;
  /** The scorer's threshold, five fraction digits. */
  threshold?: string;
  /** JSON: the v2 per-stamp breakdown, provider → {score, dedup, expiration_date}, in provider order. */
  stamps?: string;
}
