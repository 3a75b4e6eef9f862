/**
 * The scoring engine: from an address's verified stamps, the scorer's
 * settings and the scorer's nullifier holds, the score and what to record.
 * Pure domain code: the caller loads stamps and holds, verifies credentials,
 * and stores the result and the claims.
 */
import { type Decimal, formatDecimal, formatScore, sumDecimals } from './decimal.js';
import { isScorerType, type ScorerType, scorerTypeOf } from './registry.js';
import { parseSetting, ScoringInputError, type ThresholdScoreCheck } from './scorer-type.js';

export type { ScorerType } from './registry.js';
export { ScoringInputError, type ThresholdScoreCheck } from './scorer-type.js';

export interface ScorerSettings {
  type: ScorerType;
  /** Decimal text; only threshold-type scorers use it. */
  threshold: string;
  /** Provider id → decimal text, overriding the catalogue's default weight. */
  weights: Readonly<Record<string, string>>;
  /** The type's own settings (see its definition in the scorers module); its defaults fill what is absent. */
  settings?: Readonly<Record<string, unknown>>;
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
  /** Provider id → catalogue platform id; a provider not in it is its own platform. */
  platforms?: ReadonlyMap<string, string>;
  now: Date;
  stamps: readonly CandidateStamp[];
  /** The scorer's holds on the nullifiers of `stamps` (others may be absent). */
  holds: ReadonlyMap<string, NullifierHold>;
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
  /** Exact sum of the counted weights (before any type's adjustment), plain decimal text. */
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
  /** `rawScore` with five fraction digits: the v2 `score`, whatever the scorer type. */
  rawScore5: string;
  /** The scorer's threshold, five fraction digits. */
  threshold: string;
  /** The exact raw sum reaches the threshold (compared before rounding). */
  passing: boolean;
  /**
   * The v2 per-stamp breakdown, in provider order: one entry per provider with a valid, live,
   * deduplicable stamp. A counted provider shows its stamp's raw weight; a provider whose only
   * stamps are held by other addresses shows its newest such stamp, weight `0.00000`, `dedup`.
   */
  breakdown: BreakdownStamp[];
}

export interface BreakdownStamp {
  provider: string;
  /** Five fraction digits. */
  score: string;
  dedup: boolean;
  expirationDate: Date;
}

export function computeScore(input: ScoringInput): ScoreComputation {
  const { scorer, now } = input;
  if (typeof scorer.type !== 'string' || !isScorerType(scorer.type)) {
    throw new ScoringInputError(`unknown scorer type ${JSON.stringify(scorer.type)}`);
  }
  const scorerType = scorerTypeOf(scorer.type);
  const weightOverrides = parseWeightOverrides(scorer.weights);
  const address = input.address.toLowerCase();
  const nowMs = now.getTime();
  const isLive = (expiresAt: Date): boolean => expiresAt.getTime() > nowMs;

  const deduplicated: DeduplicatedStamp[] = [];
  const ignored: IgnoredStamp[] = [];
  const eligibleByProvider = new Map<string, CandidateStamp[]>();
  const dedupStamps = new Map<string, CandidateStamp[]>();

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
      const sameProviderHeld = dedupStamps.get(stamp.provider);
      if (sameProviderHeld === undefined) dedupStamps.set(stamp.provider, [stamp]);
      else sameProviderHeld.push(stamp);
      continue;
    }
    const sameProvider = eligibleByProvider.get(stamp.provider);
    if (sameProvider === undefined) eligibleByProvider.set(stamp.provider, [stamp]);
    else sameProvider.push(stamp);
  }

  const counted: CountedStamp[] = [];
  const countedStamps: CandidateStamp[] = [];
  const weights: Decimal[] = [];
  for (const provider of [...eligibleByProvider.keys()].sort(compareText)) {
    const [newest, ...older] = (eligibleByProvider.get(provider) as CandidateStamp[]).sort(newestFirst);
    if (newest === undefined) continue;
    for (const stamp of older) {
      ignored.push({ stampId: stamp.id, provider, reason: 'superseded', detail: newest.id });
    }
    const weight = weightOverrides.get(provider) ?? defaultWeight(provider, input.defaultWeights);
    weights.push(weight);
    countedStamps.push(newest);
    counted.push({ stampId: newest.id, provider, weight: formatOnce(weight, formatDecimal, decimalTexts) });
  }

  const raw = sumDecimals(weights);
  const settings = { ...scorerType.defaults, ...(scorer.settings ?? {}), threshold: scorer.threshold };
  const typed = scorerType.score(
    counted.map((stamp, index) => ({
      provider: stamp.provider,
      platform: input.platforms?.get(stamp.provider) ?? stamp.provider,
      weight: weights[index] as Decimal,
    })),
    settings,
  );
  for (const [index, stamp] of counted.entries()) stamp.weight = formatOnce(typed.applied[index] as Decimal, formatDecimal, decimalTexts);
  const claims = claimsFor(countedStamps, input.holds, address, isLive);
  // fromEntries defines own properties, so even a provider called "__proto__" is an ordinary key.
  const stampScores = Object.fromEntries(counted.map((stamp, index) => [stamp.provider, formatOnce(typed.applied[index] as Decimal, formatScore, scoreTexts)]));
  const expirationDate = countedStamps.reduce<Date | null>(
    (earliest, stamp) => (earliest === null || stamp.expirationDate.getTime() < earliest.getTime() ? stamp.expirationDate : earliest),
    null,
  );
  const threshold = parseCached(scorer.threshold, () => 'scorer threshold');
  const breakdown: BreakdownStamp[] = countedStamps.map((stamp, index) => ({
    provider: stamp.provider,
    score: formatOnce(weights[index] as Decimal, formatScore, scoreTexts),
    dedup: false,
    expirationDate: stamp.expirationDate,
  }));
  for (const [provider, held] of dedupStamps) {
    if (eligibleByProvider.has(provider)) continue;
    const newest = held.sort(newestFirst)[0] as CandidateStamp;
    breakdown.push({ provider, score: '0.00000', dedup: true, expirationDate: newest.expirationDate });
  }
  breakdown.sort((a, b) => compareText(a.provider, b.provider));
  return {
    rawScore5: formatScore(raw),
    threshold: formatOnce(threshold, formatScore, scoreTexts),
    passing: raw.gte(threshold),
    breakdown,
    rawScore: formatDecimal(raw),
    score: formatScore(typed.score),
    evidence: typed.evidence,
    counted,
    stampScores,
    expirationDate,
    deduplicated,
    ignored,
    claims,
  };
}

// Every override is checked, not only those of the providers present, so a
// broken scorer fails for every address alike instead of depending on stamps.
function parseWeightOverrides(weights: Readonly<Record<string, string>>): Map<string, Decimal> {
  const parsed = new Map<string, Decimal>();
  for (const [provider, text] of Object.entries(weights)) {
    parsed.set(provider, parseCached(text, () => `scorer weight of provider ${JSON.stringify(provider)}`));
  }
  return parsed;
}

// Weights and thresholds repeat across every scoring: each distinct text is parsed once. Decimal values
// are never mutated (every operation returns a new one), so sharing them is safe; bounded so that
// ever-changing settings cannot grow it without limit.
const parsedSettings = new Map<string, Decimal>();
const PARSED_SETTINGS_MAX = 4096;

function parseCached(text: unknown, what: () => string): Decimal {
  if (typeof text === 'string') {
    const hit = parsedSettings.get(text);
    if (hit !== undefined) return hit;
  }
  const value = parseSetting(text, what());
  if (parsedSettings.size < PARSED_SETTINGS_MAX) parsedSettings.set(text as string, value);
  return value;
}

// The weights above are shared Decimal values (parseCached), so their texts are too: formatted once
// per value. Keyed weakly by the value, which nothing mutates.
const decimalTexts = new WeakMap<Decimal, string>();
const scoreTexts = new WeakMap<Decimal, string>();

function formatOnce(value: Decimal, format: (value: Decimal) => string, texts: WeakMap<Decimal, string>): string {
  let text = texts.get(value);
  if (text === undefined) texts.set(value, (text = format(value)));
  return text;
}

function defaultWeight(provider: string, defaultWeights: ReadonlyMap<string, string>): Decimal {
  const text = defaultWeights.get(provider);
  return parseCached(text ?? '0', () => `default weight of provider ${JSON.stringify(provider)}`);
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
