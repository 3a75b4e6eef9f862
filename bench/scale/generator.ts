/**
 * The rows of the scale data set, without the database: generated addresses with their stamps,
 * each scored by the data set's scorers, as the service writes them. The values come from the
 * service's own row builders (`stampRowOf`, `scoringOutcome`, `settledColumns`); only the inputs
 * are generated. A generated credential is a real dev-issuer credential of the same provider with
 * the subject, nullifier and dates replaced: its proof no longer verifies (stored stamps are never
 * verified again, so nothing reads it), which is what makes five million of them affordable.
 */
import { createHash } from 'node:crypto';
import type { Selectable } from 'kysely';
import type { NullifierHoldsTable, ScoreEventsTable, ScoresTable, StampsTable } from '../../src/db/tables/index.js';

export type StampRow = Selectable<StampsTable>;
export type ScoreEventRow = Selectable<ScoreEventsTable>;
import type { Scorer } from '../../src/scoring/accounts/accounts.service.js';
import { scoringOutcome } from '../../src/scoring/jobs/passport-scoring.js';
import { settledColumns } from '../../src/scoring/records/settled-scoring.js';
import type { Catalogue } from '../../src/scoring/stamps/catalogue.js';
import { credentialDigest, type VerifiedCredential } from '../../src/scoring/stamps/credentials.js';
import type { ScoringStamp } from '../../src/scoring/stamps/stamps.repository.js';
import { stampRowOf } from '../../src/scoring/stamps/stamps.service.js';

export const DAY_MS = 86_400_000;

/** The full-size data set (`--size 1`); a size scales every count. */
export const FULL_SIZE = {
  addresses: 1_000_000,
  stampsPerAddress: 5,
  bounties: 100_000,
  contributions: 1_000_000,
  grants: 2_000,
} as const;

export interface ScaleCounts {
  addresses: number;
  bounties: number;
  contributions: number;
  grants: number;
}

export function scaleCounts(size: number): ScaleCounts {
  const scaled = (n: number) => Math.max(1, Math.round(n * size));
  return { addresses: scaled(FULL_SIZE.addresses), bounties: scaled(FULL_SIZE.bounties), contributions: scaled(FULL_SIZE.contributions), grants: scaled(FULL_SIZE.grants) };
}

/** Deterministic per-index randomness: the same index gives the same rows on every build. */
export function unitRandom(label: string, i: number): number {
  return createHash('sha256').update(`${label}:${i}`).digest().readUInt32BE(0) / 2 ** 32;
}

export function scaleAddress(i: number): string {
  return `0x${createHash('sha256').update(`scale-address:${i}`).digest('hex').slice(0, 40)}`;
}

/**
 * Five providers per address with a skewed mix: the first providers of the pool are held by most
 * addresses (as the common stamps are), the tail by few.
 */
export function providersOf(i: number, pool: readonly string[], count: number = FULL_SIZE.stampsPerAddress): string[] {
  const chosen: string[] = [];
  for (let k = 0; chosen.length < count && k < count * 8; k++) {
    // Square of a uniform value: index density falls along the pool.
    const at = Math.floor(unitRandom(`provider:${k}`, i) ** 2 * pool.length);
    const provider = pool[at]!;
    if (!chosen.includes(provider)) chosen.push(provider);
  }
  for (const provider of pool) if (chosen.length < count && !chosen.includes(provider)) chosen.push(provider);
  return chosen;
}

type Credential = Record<string, unknown> & {
  credentialSubject: Record<string, unknown>;
  proof: Record<string, unknown>;
  issuer: string;
  issuanceDate: string;
  expirationDate: string;
};

const wholeSeconds = (ms: number) => `${new Date(ms).toISOString().slice(0, 19)}Z`;

/** A provider's template credential re-stated for another address, nullifier and validity (proof kept, see above). */
export function restatedCredential(template: unknown, address: string, nullifier: string, issuedAt: number, expiresAt: number): Credential {
  const source = template as Credential;
  return {
    ...source,
    credentialSubject: { ...source.credentialSubject, id: `did:pkh:eip155:1:${address}`, nullifiers: [nullifier] },
    expirationDate: wholeSeconds(expiresAt),
    issuanceDate: wholeSeconds(issuedAt),
    proof: { ...source.proof, created: wholeSeconds(issuedAt) },
  };
}

/** What proof verification reads of a credential, read without verifying the proof. */
export function verifiedFieldsOf(credential: unknown): VerifiedCredential {
  const c = credential as Credential;
  const subject = c.credentialSubject as { id: string; provider: string; nullifiers?: string[]; hash?: string };
  return {
    issuer: c.issuer,
    subjectAddress: subject.id.slice('did:pkh:eip155:1:'.length).toLowerCase() as VerifiedCredential['subjectAddress'],
    provider: subject.provider,
    nullifiers: subject.nullifiers ?? [subject.hash as string],
    issuanceDate: new Date(c.issuanceDate),
    expirationDate: new Date(c.expirationDate),
    digest: credentialDigest(credential),
  };
}

/** The stamp row `stamps.storeCredential` writes for a credential stored at `now`. */
export function stampRow(id: number, credential: unknown, address: string, now: number): StampRow {
  return { id, ...stampRowOf(verifiedFieldsOf(credential), credential, address), created_at: now, updated_at: now, deleted_at: null, revoked_at: null };
}

export interface ScoringContext {
  scorerId: number;
  scorer: Pick<Scorer, 'type' | 'threshold' | 'weights' | 'settings'>;
  trusted: ReadonlySet<string>;
  catalogue: Pick<Catalogue, 'defaultWeights' | 'metadataFor'>;
}

export interface ScoredRows {
  holds: NullifierHoldsTable[];
  score: ScoresTable;
  event: ScoreEventRow;
}

/** What a first scoring of an address (no holds of others on its nullifiers) records: holds, the row, its event. */
export function firstScoringRows(context: ScoringContext, address: string, stamps: readonly StampRow[], now: number, eventId: number): ScoredRows {
  const outcome = scoringOutcome({ ...context, stamps: stamps.map(scoringStampOf), holds: [], address, now });
  const settled = settledColumns({ status: 'DONE', outcome });
  const { stamp_scores: _v1Only, ...eventColumns } = settled;
  const event: ScoreEventRow = { id: eventId, type: 'score.updated', scorer_id: context.scorerId, address, ...eventColumns, created_at: now };
  return {
    holds: outcome.claims.map((claim) => ({ scorer_id: context.scorerId, nullifier: claim.nullifier, address, expires_at: claim.expiresAt })),
    score: { scorer_id: context.scorerId, address, ...settled, last_score_timestamp: now, event_id: eventId },
    event,
  };
}

export function scoringStampOf(row: StampRow): ScoringStamp {
  return {
    id: row.id,
    provider: row.provider,
    issuer: row.issuer,
    nullifiers: JSON.parse(row.nullifiers) as string[],
    issuanceDate: Number(row.issuance_date),
    expirationDate: Number(row.expiration_date),
  };
}
