/**
 * The scoring engine: from an address's verified stamps, the scorer's
 * settings and the scorer's nullifier holds, the score and what to record.
 * Pure domain code: the caller loads stamps and holds, verifies credentials,
 * and stores the result and the claims.
 */
import type Big from 'big.js';
import { formatDecimal, formatScore, parseDecimal, sumDecimals } from './decimal.js';

export type ScorerType = 'weighted' | 'binary';

export interface ScorerSettings {
  type: ScorerType;
  /** Decimal text; only binary scorers use it. */
  threshold: string;
  /** Provider id → decimal text, overriding the catalogue's default weight. */
  weights: Readonly<Record<string, string>>;
}

/** A stored stamp of the scored address, after credential verification. */
export interface CandidateStamp {
  id: string;
  provider: string;
  /** The credential's identity: its `nullifiers`, or its single `hash`. */
  nullifiers: readonly string[];
  issuanceDate: Date;
  expirationDate: Date;
  /**
   * `true` when the verifier accepted the credential (trusted issuer, proof,
   * subject, expiry, not revoked or deleted); `false` or the verifier's
   * reason otherwise.
   */
  valid: boolean | string;
}

/** Within one scorer, the address that holds a nullifier and until when. */
export interface NullifierHold {
  address: string;
  expiresAt: Date;
}

export interface ScoringInput {
  /** The scored address (compared case-insensitively with hold owners). */
  address: string;
  scorer: ScorerSettings;
  /** Provider id → decimal text: the catalogue's default weights. */
  defaultWeights: ReadonlyMap<string, string>;
  now: Date;
  stamps: readonly CandidateStamp[];
  /** The scorer's holds on the nullifiers of `stamps` (others may be absent). */
  holds: ReadonlyMap<string, NullifierHold>;
}

export interface ThresholdScoreCheck {
  type: 'ThresholdScoreCheck';
  success: boolean;
  /** Five fraction digits. */
  rawScore: string;
  /** Five fraction digits. */
  threshold: string;
}

export interface CountedStamp {
  stampId: string;
  provider: string;
  /** Decimal text of the weight applied. */
  weight: string;
}

export interface DeduplicatedStamp {
  stampId: string;
  provider: string;
  /** The nullifier another address holds. */
  nullifier: string;
  heldBy: string;
}

export type IgnoredReason = 'invalid' | 'expired' | 'no_nullifier' | 'superseded';

export interface IgnoredStamp {
  stampId: string;
  provider: string;
  reason: IgnoredReason;
  /** The verifier's reason for `invalid`; the counted stamp's id for `superseded`. */
  detail?: string;
}

/** A hold the scored address should take, or extend, within the scorer. */
export interface NullifierClaim {
  nullifier: string;
  expiresAt: Date;
}

export interface ScoreComputation {
  /** Exact sum of the counted weights, plain decimal text. */
  rawScore: string;
  /** The score record's `score`: five fraction digits. */
  score: string;
  /** Filled for binary scorers only. */
  evidence: ThresholdScoreCheck | null;
  /** One stamp per provider, in provider order. */
  counted: CountedStamp[];
  /** The record's `stamp_scores`: provider → applied weight, five fraction digits, for each counted stamp. */
  stampScores: Record<string, string>;
  /** The record's `expiration_date`: the earliest expiry among the counted stamps; null when none counted. */
  expirationDate: Date | null;
  deduplicated: DeduplicatedStamp[];
  ignored: IgnoredStamp[];
  /** In nullifier order. */
  claims: NullifierClaim[];
}

/** The scorer's settings cannot be used (a malformed weight or threshold). */
export class ScoringInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ScoringInputError';
  }
}

const BINARY_PASS = '1.00000';
const BINARY_FAIL = '0.00000';

export function computeScore(input: ScoringInput): ScoreComputation {
  const { scorer, now } = input;
  if (scorer.type !== 'binary' && scorer.type !== 'weighted') {
    throw new ScoringInputError(`unknown scorer type ${JSON.stringify(scorer.type)}`);
  }
  const weightOverrides = parseWeightOverrides(scorer.weights);
  const threshold = scorer.type === 'binary' ? parseSetting(scorer.threshold, 'scorer threshold') : null;
  const address = input.address.toLowerCase();
  const nowMs = now.getTime();
  const isLive = (expiresAt: Date): boolean => expiresAt.getTime() > nowMs;

  const deduplicated: DeduplicatedStamp[] = [];
  const ignored: IgnoredStamp[] = [];
  const eligibleByProvider = new Map<string, CandidateStamp[]>();

  // Deduplication comes before choosing one stamp per provider. Choosing first
  // would let a held newest stamp hide an older one of the same provider whose
  // nullifier nobody else holds (say, the owner re-linked a different account):
  // the provider would then count for nothing although the address has a unique
  // stamp for it, and the result would depend on issuance order, not on the
  // stamps the address genuinely owns.
  for (const stamp of input.stamps) {
    if (stamp.valid !== true) {
      ignored.push({
        stampId: stamp.id,
        provider: stamp.provider,
        reason: 'invalid',
        ...(typeof stamp.valid === 'string' ? { detail: stamp.valid } : {}),
      });
      continue;
    }
    // Not trusting the verifier alone: stamps expire between verification and scoring.
    if (!isLive(stamp.expirationDate)) {
      ignored.push({ stampId: stamp.id, provider: stamp.provider, reason: 'expired' });
      continue;
    }
    if (Number.isNaN(stamp.issuanceDate.getTime())) {
      ignored.push({ stampId: stamp.id, provider: stamp.provider, reason: 'invalid', detail: 'issuanceDate is not a valid date' });
      continue;
    }
    // Without an identity a stamp cannot be deduplicated, so it cannot be trusted to be unique.
    if (stamp.nullifiers.length === 0) {
      ignored.push({ stampId: stamp.id, provider: stamp.provider, reason: 'no_nullifier' });
      continue;
    }
    const heldElsewhere = firstHeldByAnother(stamp, input.holds, address, isLive);
    if (heldElsewhere !== null) {
      deduplicated.push({ stampId: stamp.id, provider: stamp.provider, ...heldElsewhere });
      continue;
    }
    const sameProvider = eligibleByProvider.get(stamp.provider);
    if (sameProvider === undefined) eligibleByProvider.set(stamp.provider, [stamp]);
    else sameProvider.push(stamp);
  }

  const counted: CountedStamp[] = [];
  const countedStamps: CandidateStamp[] = [];
  const weights: Big[] = [];
  for (const provider of [...eligibleByProvider.keys()].sort(compareText)) {
    const [newest, ...older] = (eligibleByProvider.get(provider) as CandidateStamp[]).sort(newestFirst);
    if (newest === undefined) continue;
    for (const stamp of older) {
      ignored.push({ stampId: stamp.id, provider, reason: 'superseded', detail: newest.id });
    }
    const weight = weightOverrides.get(provider) ?? defaultWeight(provider, input.defaultWeights);
    weights.push(weight);
    countedStamps.push(newest);
    counted.push({ stampId: newest.id, provider, weight: formatDecimal(weight) });
  }

  const raw = sumDecimals(weights);
  const claims = claimsFor(countedStamps, input.holds, address, isLive);
  // fromEntries defines own properties, so even a provider called "__proto__" is an ordinary key.
  const stampScores = Object.fromEntries(counted.map((stamp, index) => [stamp.provider, formatScore(weights[index] as Big)]));
  const expirationDate = countedStamps.reduce<Date | null>(
    (earliest, stamp) => (earliest === null || stamp.expirationDate.getTime() < earliest.getTime() ? stamp.expirationDate : earliest),
    null,
  );
  const result = { rawScore: formatDecimal(raw), counted, stampScores, expirationDate, deduplicated, ignored, claims };

  if (threshold === null) {
    return { ...result, score: formatScore(raw), evidence: null };
  }
  // The check uses the exact sum; the five-digit evidence is only its display,
  // so a raw 19.999996 fails a threshold of 20 although both read "20.00000".
  const success = raw.gte(threshold);
  return {
    ...result,
    score: success ? BINARY_PASS : BINARY_FAIL,
    evidence: { type: 'ThresholdScoreCheck', success, rawScore: formatScore(raw), threshold: formatScore(threshold) },
  };
}

// Every override is checked, not only those of the providers present, so a
// broken scorer fails for every address alike instead of depending on stamps.
function parseWeightOverrides(weights: Readonly<Record<string, string>>): Map<string, Big> {
  const parsed = new Map<string, Big>();
  for (const [provider, text] of Object.entries(weights)) {
    parsed.set(provider, parseSetting(text, `scorer weight of provider ${JSON.stringify(provider)}`));
  }
  return parsed;
}

function defaultWeight(provider: string, defaultWeights: ReadonlyMap<string, string>): Big {
  const text = defaultWeights.get(provider);
  return parseSetting(text ?? '0', `default weight of provider ${JSON.stringify(provider)}`);
}

function parseSetting(text: unknown, what: string): Big {
  if (typeof text !== 'string') throw new ScoringInputError(`${what}: expected decimal text, got ${typeof text}`);
  try {
    return parseDecimal(text);
  } catch (error) {
    throw new ScoringInputError(`${what}: ${(error as Error).message}`);
  }
}

function firstHeldByAnother(
  stamp: CandidateStamp,
  holds: ReadonlyMap<string, NullifierHold>,
  address: string,
  isLive: (expiresAt: Date) => boolean,
): { nullifier: string; heldBy: string } | null {
  for (const nullifier of stamp.nullifiers) {
    const hold = holds.get(nullifier);
    if (hold !== undefined && isLive(hold.expiresAt) && hold.address.toLowerCase() !== address) {
      return { nullifier, heldBy: hold.address };
    }
  }
  return null;
}

/**
 * Each counted stamp's nullifiers, held until that stamp expires. A
 * nullifier shared by several counted stamps is held until the last of them
 * expires, and a claim never shortens a live hold the address already has:
 * either would let another address take over a nullifier this one still owns.
 */
function claimsFor(
  countedStamps: readonly CandidateStamp[],
  holds: ReadonlyMap<string, NullifierHold>,
  address: string,
  isLive: (expiresAt: Date) => boolean,
): NullifierClaim[] {
  const expiries = new Map<string, Date>();
  for (const stamp of countedStamps) {
    for (const nullifier of stamp.nullifiers) {
      const known = expiries.get(nullifier);
      if (known === undefined) {
        const ownHold = holds.get(nullifier);
        const ownLiveExpiry =
          ownHold !== undefined && isLive(ownHold.expiresAt) && ownHold.address.toLowerCase() === address
            ? ownHold.expiresAt
            : undefined;
        expiries.set(nullifier, later(stamp.expirationDate, ownLiveExpiry));
      } else {
        expiries.set(nullifier, later(stamp.expirationDate, known));
      }
    }
  }
  return [...expiries.keys()].sort(compareText).map((nullifier) => ({ nullifier, expiresAt: expiries.get(nullifier) as Date }));
}

function later(a: Date, b: Date | undefined): Date {
  return b !== undefined && b.getTime() > a.getTime() ? b : a;
}

/**
 * Newest issuance first. Equal issuance dates are decided by the later
 * expiry, then by the smaller stamp id, so the same stamps always give the
 * same choice whatever order the database returns them in.
 */
function newestFirst(a: CandidateStamp, b: CandidateStamp): number {
  return (
    b.issuanceDate.getTime() - a.issuanceDate.getTime() ||
    b.expirationDate.getTime() - a.expirationDate.getTime() ||
    compareText(a.id, b.id)
  );
}

/** Code-unit order: independent of the process locale, unlike localeCompare. */
function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
