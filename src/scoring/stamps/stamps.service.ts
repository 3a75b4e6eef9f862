import { AppError } from '../../errors.js';
import { type CredentialLimits, DEFAULT_CREDENTIAL_LIMITS, screenCredential } from './credential-intake.js';
import { type CredentialVerifier, checkCredentialAt, type VerifiedCredential } from './credentials.js';
import type { TrustedIssuerService } from './issuers.service.js';
import type { NewStamp, StampsRepository } from './stamps.repository.js';

export interface CredentialOutcome {
  /** Where the credential stood in the input, e.g. `2` or `1.credentials[3]`. */
  index: string;
  status: 'stored' | 'unchanged' | 'rejected';
  reason?: string;
  provider?: string;
  address?: string;
}

export interface ImportReport {
  stored: number;
  unchanged: number;
  rejected: number;
  results: CredentialOutcome[];
}

const addressPattern = /^0x[0-9a-fA-F]{40}$/;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

type Entry = { index: string; address: string | null; credential: unknown } | { index: string; problem: string };

/** Flattens the accepted document shapes into (where, expected address, credential) entries. */
function entriesOf(document: unknown): Entry[] {
  const items = Array.isArray(document) ? document : [document];
  return items.flatMap((item, i): Entry[] => {
    if (!isObject(item) || !('credentials' in item)) return [{ index: String(i), address: null, credential: item }];
    if (typeof item.address !== 'string' || !addressPattern.test(item.address) || !Array.isArray(item.credentials)) {
      return [{ index: String(i), problem: 'an {"address","credentials"} document needs a valid address and a credentials array' }];
    }
    const address = item.address.toLowerCase();
    return item.credentials.map((credential, j) => ({ index: `${i}.credentials[${j}]`, address, credential }));
  });
}

export interface StampIntakeOptions {
  readonly limits: CredentialLimits;
  /** Most credentials one import may carry (MAX_STAMPS_PER_REQUEST). */
  readonly maxStamps: number;
}

export function stampService(
  repo: StampsRepository,
  verifier: CredentialVerifier,
  issuers: TrustedIssuerService,
  clock: () => number = Date.now,
  intake: StampIntakeOptions = { limits: DEFAULT_CREDENTIAL_LIMITS, maxStamps: 100 },
) {
  return {
    limits: intake.limits,
    maxStamps: intake.maxStamps,


    /**
     * Verifies each credential and keeps the good ones. Every per-credential limit applies; the
     * per-request count does not: the file is the operator's own, and it is worked through one
     * credential at a time, so its length bounds only how long the command runs. A credential must have
     * a valid proof from a trusted issuer, be unexpired, and (in the
     * `{address, credentials}` form) be about that address.
     */
    async importCredentials(document: unknown): Promise<ImportReport> {
      const entries = entriesOf(document);
      const trusted = await issuers.current();
      const report: ImportReport = { stored: 0, unchanged: 0, rejected: 0, results: [] };
      for (const entry of entries) {
        const outcome: Omit<CredentialOutcome, 'index'> =
          'problem' in entry
            ? { status: 'rejected', reason: entry.problem }
            : await this.storeCredential(entry.credential, entry.address, trusted);
        report.results.push({ index: entry.index, ...outcome });
        report[outcome.status === 'rejected' ? 'rejected' : outcome.status] += 1;
      }
      return report;
    },

    async storeCredential(
      credential: unknown,
      expectedAddress: string | null,
      trusted: ReadonlySet<string>,
    ): Promise<Omit<CredentialOutcome, 'index'>> {
      // Limits, issuer and schema before the proof: nothing from an untrusted or oversized
      // credential is ever hashed.
      const screened = screenCredential(credential, intake.limits, trusted);
      if (!screened.ok) {
        return { status: 'rejected', reason: screened.reason, ...(screened.provider !== undefined ? { provider: screened.provider } : {}) };
      }
      const proof = verifier.verifyProof(credential);
      if (!proof.ok) return { status: 'rejected', reason: proof.reason };
      const verified = proof.credential;
      const address = expectedAddress ?? verified.subjectAddress;
      const check = checkCredentialAt(verified, { now: new Date(clock()), trustedIssuers: trusted, address });
      if (!check.ok) return { status: 'rejected', reason: check.reason, provider: verified.provider };
      const status = await repo.upsert(stampRowOf(verified, credential, address), clock());
      if (status === 'revoked') return { status: 'rejected', reason: 'this credential was revoked', provider: verified.provider, address };
      return { status, provider: verified.provider, address };
    },

    async revoke(filter: { digest?: string; address?: string; provider?: string }): Promise<number> {
      if (!filter.digest && !filter.address) {
        throw new AppError('invalid_request', 'Name the stamps to revoke with a digest or an address (optionally with a provider).');
      }
      if (filter.address && !addressPattern.test(filter.address)) {
        throw new AppError('invalid_address', `"${filter.address}" is not 0x followed by 40 hexadecimal digits.`);
      }
      return repo.revoke({ ...filter, address: filter.address?.toLowerCase() }, clock());
    },

    async listForOperator(address: string) {
      if (!addressPattern.test(address)) throw new AppError('invalid_address', `"${address}" is not 0x followed by 40 hexadecimal digits.`);
      const rows = await repo.listByAddress(address.toLowerCase());
      return rows.map((row) => ({
        id: row.id,
        provider: row.provider,
        issuer: row.issuer,
        digest: row.digest,
        issuanceDate: new Date(row.issuance_date),
        expirationDate: new Date(row.expiration_date),
        state: row.revoked_at !== null ? 'revoked' : row.deleted_at !== null ? 'deleted' : 'live',
      }));
    },
  };
}

export type StampService = ReturnType<typeof stampService>;

/** The stamp row a verified credential is stored as (the scale data set builds its rows with it too). */
export function stampRowOf(verified: VerifiedCredential, credential: unknown, address: string): NewStamp {
  return {
    address,
    provider: verified.provider,
    issuer: verified.issuer,
    nullifiers: JSON.stringify(verified.nullifiers),
    digest: verified.digest,
    credential: JSON.stringify(credential),
    issuance_date: verified.issuanceDate.getTime(),
    expiration_date: verified.expirationDate.getTime(),
  };
}
