import type { AccountService } from './accounts.js';
import type { Catalogue } from './catalogue.js';
import { type CandidateStamp, computeScore, type NullifierHold } from './engine.js';
import type { TrustedIssuerService } from './issuers.js';
import type { ScoringOutcome } from './scoring-jobs.repository.js';
import type { StampsRepository } from './stamps.repository.js';

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
  const stamps: CandidateStamp[] = rows.map((row) => ({
    id: String(row.id),
    provider: row.provider,
    nullifiers: JSON.parse(row.nullifiers) as string[],
    issuanceDate: new Date(row.issuance_date),
    expirationDate: new Date(row.expiration_date),
    valid: trusted.has(row.issuer) ? true : 'issuer is not trusted',
  }));
  const holdRows = await deps.stamps.holdsFor(scorerId, [...new Set(stamps.flatMap((s) => s.nullifiers))]);
  const holds = new Map<string, NullifierHold>(
    holdRows.map((h) => [h.nullifier, { address: h.address, expiresAt: new Date(h.expires_at) }]),
  );
  const result = computeScore({
    address,
    scorer: { type: scorer.type, threshold: scorer.threshold, weights: scorer.weights },
    defaultWeights: deps.catalogue.defaultWeights,
    now: new Date(now),
    stamps,
    holds,
  });
  return {
    score: result.score,
    evidence: result.evidence ? JSON.stringify(result.evidence) : null,
    expirationDate: result.expirationDate === null ? null : result.expirationDate.getTime(),
    stampScores: JSON.stringify(result.stampScores),
    claims: result.claims.map((c) => {
      const hold = holds.get(c.nullifier);
      const expiresAt = c.expiresAt.getTime();
      return { nullifier: c.nullifier, expiresAt, heldAlready: hold?.address === address && hold.expiresAt.getTime() === expiresAt };
    }),
  };
}
