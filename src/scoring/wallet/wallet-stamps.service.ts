import { AppError } from '../../errors.js';
import { screenCredential } from '../stamps/credential-intake.js';
import { credentialDigest } from '../stamps/credentials.js';
import type { StampService } from '../stamps/stamps.service.js';
import { formatScoringTimestamp } from '../timestamps.js';
import type { StampsRepository } from '../stamps/stamps.repository.js';

export interface WalletCredentialResult {
  /** Position of the credential in the request's `credentials` array. */
  index: number;
  status: 'stored' | 'unchanged' | 'rejected';
  provider?: string;
  reason?: string;
}

export interface WalletWriteReport {
  stored: number;
  unchanged: number;
  rejected: number;
  /** Stamps soft-deleted by the write (replacements only; 0 for an add). */
  deleted: number;
  results: WalletCredentialResult[];
}

/**
 * How a replacement treats the address's other stamps:
 * `all` — afterwards the live stamps are exactly the accepted credentials of the request;
 * `providers` — only stamps of providers that got an accepted credential are replaced.
 */
export type ReplaceScope = 'all' | 'providers';

/**
 * A signed-in wallet's writes to its own stamps. The address always comes from the session,
 * never from the request, so a wallet cannot touch another address's stamps. Every credential
 * is verified by the stamp service on the way in (proof, trusted issuer, unexpired, subject =
 * the session's address). Deleting is soft: the stamp stops counting at the next scoring and
 * its nullifier holds stay until they expire.
 */
export function walletStampService(repo: Pick<StampsRepository, 'liveStamps' | 'softDelete'>, stamps: StampService, clock: () => number = Date.now) {
  /**
   * A request with a credential that is over a limit or not of the stamp schema is refused as
   * a whole (400) before anything is stored or hashed: no real wallet sends one, and refusing
   * it costs one walk over the body.
   */
  function refuseMalformed(credentials: readonly unknown[], trusted: ReadonlySet<string>): void {
    if (credentials.length > stamps.maxStamps) {
      throw new AppError('invalid_request', `At most ${stamps.maxStamps} credentials per request (MAX_STAMPS_PER_REQUEST).`);
    }
    credentials.forEach((credential, index) => {
      const verdict = screenCredential(credential, stamps.limits, trusted);
      if (!verdict.ok && verdict.malformed) throw new AppError('invalid_credential', `credentials[${index}]: ${verdict.reason}`);
    });
  }

  async function store(address: string, credentials: readonly unknown[], trusted: ReadonlySet<string>) {
    refuseMalformed(credentials, trusted);
    const report: WalletWriteReport = { stored: 0, unchanged: 0, rejected: 0, deleted: 0, results: [] };
    const accepted: { provider: string; digest: string }[] = [];
    for (const [index, credential] of credentials.entries()) {
      const outcome = await stamps.storeCredential(credential, address, trusted);
      report[outcome.status] += 1;
      report.results.push({
        index,
        status: outcome.status,
        ...(outcome.provider !== undefined ? { provider: outcome.provider } : {}),
        ...(outcome.reason !== undefined ? { reason: outcome.reason } : {}),
      });
      if (outcome.status !== 'rejected' && outcome.provider !== undefined) {
        accepted.push({ provider: outcome.provider, digest: credentialDigest(credential) });
      }
    }
    return { report, accepted };
  }

  return {
    async list(address: string) {
      const rows = await repo.liveStamps(address);
      return rows.map((row) => ({
        provider: row.provider,
        issuer: row.issuer,
        digest: row.digest,
        issuanceDate: formatScoringTimestamp(row.issuance_date),
        expirationDate: formatScoringTimestamp(row.expiration_date),
        addedAt: formatScoringTimestamp(row.created_at),
        credential: JSON.parse(row.credential) as Record<string, unknown>,
      }));
    },

    /** Verifies and stores each credential; bad ones are reported by index, good ones kept. */
    async add(address: string, credentials: readonly unknown[], trusted: ReadonlySet<string>): Promise<WalletWriteReport> {
      return (await store(address, credentials, trusted)).report;
    },

    /**
     * Stores the accepted credentials, then soft-deletes the other live stamps in `scope`: all of
     * them (unless a credential was rejected), or those of the providers an accepted one names.
     */
    async replace(
      address: string,
      credentials: readonly unknown[],
      trusted: ReadonlySet<string>,
      scope: ReplaceScope,
    ): Promise<WalletWriteReport> {
      const { report, accepted } = await store(address, credentials, trusted);
      // A whole-wallet replacement with a rejected credential (expired, mistyped) deletes nothing:
      // the wallet keeps what it had plus what was accepted, and can send a corrected set again.
      if (scope === 'all' && report.rejected > 0) return report;
      const keepDigests = accepted.map((a) => a.digest);
      const providers = scope === 'providers' ? [...new Set(accepted.map((a) => a.provider))] : undefined;
      report.deleted = await repo.softDelete(address, { providers, keepDigests }, clock());
      return report;
    },

    /** Soft-deletes the address's live stamps of these providers. */
    async remove(address: string, providers: readonly string[]): Promise<{ deleted: number }> {
      return { deleted: await repo.softDelete(address, { providers: [...new Set(providers)] }, clock()) };
    },
  };
}

export type WalletStampService = ReturnType<typeof walletStampService>;
