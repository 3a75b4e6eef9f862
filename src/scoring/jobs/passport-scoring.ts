import type { AccountService, Scorer } from '../accounts/accounts.service.js';
import type { Catalogue } from '../stamps/catalogue.js';
import { type BreakdownStamp, type CandidateStamp, computeScore, type NullifierHold } from '../scorers/engine.js';
import type { TrustedIssuerService } from '../stamps/issuers.service.js';
import type { ScoringOutcome } from '../records/score-outcome.js';
import type { ScoringStamp, StampsRepository } from '../stamps/stamps.repository.js';
import { formatScoringTimestamp } from '../timestamps.js';

export interface PassportScoringDeps {
  stamps: StampsRepository;
  issuers: TrustedIssuerService;
  catalogue: Catalogue;
  accounts: AccountService;
}

/**
 * Scores one address for one scorer from what is stored now. Proofs were
 * verified when the stamps were stored and stored credentials never change,
 * so only what can change is re-checked here: issuer trust (in this
 * function), expiry and deduplication (in the engine), revocation and
 * deletion (in the query).
 */
export async function scorePassport(deps: PassportScoringDeps, scorerId: number, address: string, now: number): Promise<ScoringOutcome> {
  const [scorer, rows, trusted] = await Promise.all([
    deps.accounts.getScorer(scorerId),
    deps.stamps.liveForScoring(address),
    deps.issuers.current(),
  ]);
  const nullifiers = [...new Set(rows.flatMap((row) => row.nullifiers))];
  const holdRows = await deps.stamps.holdsFor(scorerId, address, nullifiers);
  return scoringOutcome({ scorer, stamps: rows, trusted, holds: holdRows, catalogue: deps.catalogue, address, now });
}

/** What scorePassport reads, read: the scorer, the live stamps, the trusted issuers and the holds of the stamps' nullifiers. */
export interface ScoringInputs {
  scorer: Pick<Scorer, 'type' | 'threshold' | 'weights' | 'settings'>;
  stamps: readonly ScoringStamp[];
  trusted: ReadonlySet<string>;
  holds: readonly { nullifier: string; address: string; expires_at: number }[];
  catalogue: Pick<Catalogue, 'defaultWeights' | 'metadataFor'>;
  address: string;
  now: number;
}

/** The outcome of a scoring from what it read, without the database (the scale data set builds its rows with it too). */
export function scoringOutcome(inputs: ScoringInputs): ScoringOutcome {
  const { scorer, trusted, address, now, catalogue } = inputs;
  const stamps: CandidateStamp[] = inputs.stamps.map((row) => ({
    id: String(row.id),
    provider: row.provider,
    nullifiers: row.nullifiers,
    issuanceDate: new Date(row.issuanceDate),
    expirationDate: new Date(row.expirationDate),
    valid: trusted.has(row.issuer) ? true : 'issuer is not trusted',
  }));
  const holds = new Map<string, NullifierHold>(
    inputs.holds.map((h) => [h.nullifier, { address: h.address, expiresAt: new Date(Number(h.expires_at)) }]),
  );
  const result = computeScore({
    address,
    scorer: { type: scorer.type, threshold: scorer.threshold, weights: scorer.weights, settings: scorer.settings },
    defaultWeights: catalogue.defaultWeights,
    platforms: new Map(stamps.map((s) => [s.provider, catalogue.metadataFor(s.provider)?.platform.id ?? s.provider])),
    now: new Date(now),
    stamps,
    holds,
  });
  return {
    score: result.score,
    evidence: result.evidence ? JSON.stringify(result.evidence) : null,
    expirationDate: result.expirationDate === null ? null : result.expirationDate.getTime(),
    stampScores: JSON.stringify(result.stampScores),
    rawScore: result.rawScore5,
    passing: result.passing,
    threshold: result.threshold,
    stamps: breakdownJson(result.breakdown),
    claims: result.claims.map((c) => {
      const hold = holds.get(c.nullifier);
      const expiresAt = c.expiresAt.getTime();
      return { nullifier: c.nullifier, expiresAt, heldAlready: hold?.address === address && hold.expiresAt.getTime() === expiresAt };
    }),
  };
}

/** What a chunk's scoring read, read: as ScoringInputs, for many addresses of one scorer. */
export interface ChunkScoringInputs extends Omit<ScoringInputs, 'stamps' | 'holds' | 'address'> {
  /** Distinct addresses, in the order they are scored. */
  addresses: readonly string[];
  stamps: ReadonlyMap<string, readonly ScoringStamp[]>;
  /** The holds of every nullifier of the chunk's stamps. */
  holds: readonly { nullifier: string; address: string; expires_at: number }[];
}

/**
 * The outcome of each address, as scoring them one after the other would give: an address's
 * claims are holds that the addresses after it see (two addresses of a chunk sharing a nullifier:
 * the first counts it, the second finds it taken). A scoring that throws gives its error, and its
 * claims are not seen by the others; the caller scores that address alone.
 */
export function chunkOutcomes(inputs: ChunkScoringInputs): Map<string, ScoringOutcome | Error> {
  const holds = new Map(inputs.holds.map((hold) => [hold.nullifier, hold]));
  const outcomes = new Map<string, ScoringOutcome | Error>();
  for (const address of inputs.addresses) {
    const stamps = inputs.stamps.get(address) ?? [];
    const own: { nullifier: string; address: string; expires_at: number }[] = [];
    for (const stamp of stamps) {
      for (const nullifier of stamp.nullifiers) {
        const hold = holds.get(nullifier);
        if (hold) own.push(hold);
      }
    }
    try {
      const outcome = scoringOutcome({ ...inputs, stamps, holds: own, address });
      for (const claim of outcome.claims) holds.set(claim.nullifier, { nullifier: claim.nullifier, address, expires_at: claim.expiresAt });
      outcomes.set(address, outcome);
    } catch (error) {
      outcomes.set(address, error instanceof Error ? error : new Error(String(error)));
    }
  }
  return outcomes;
}

/**
 * The v2 `stamps` object as JSON text, in provider order, rendered once when scored: the stored
 * text is compared (did the result change?) and copied into answers as it is.
 */
export function breakdownJson(breakdown: readonly BreakdownStamp[]): string {
  return JSON.stringify(
    Object.fromEntries(
      breakdown.map((stamp) => [
        stamp.provider,
        { score: stamp.score, dedup: stamp.dedup, expiration_date: expiryText(stamp.expirationDate.getTime()) },
      ]),
    ),
  );
}

// Stamp expiries repeat on every scoring of an address: each is formatted once (bounded).
const expiryTexts = new Map<number, string>();

function expiryText(ms: number): string {
  let text = expiryTexts.get(ms);
  if (text === undefined) {
    if (expiryTexts.size >= 100_000) expiryTexts.clear();
    expiryTexts.set(ms, (text = formatScoringTimestamp(ms)));
  }
  return text;
}
