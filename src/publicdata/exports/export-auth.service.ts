import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { AppError } from '../../errors.js';
import type { ExportCredentialsRepository } from './export-credentials.repository.js';
import { handleKey } from '../profiles.js';

/** Who calls a grant-specific export. */
export interface ExportCaller {
  /** The caller's profile, or null for a logged-in handle no profile has. */
  profileId: number | null;
  handle: string;
  /** A browser session gets `meta.api_key`; a `_key`/`_secret` call does not. */
  via: 'session' | 'credentials';
  /** Records that the credentials served a call; made only once the call is authorised. */
  recordUse(): Promise<void>;
}

/** `meta.api_key`: `_secret` is shown only in the response that created it, null afterwards. */
export interface IssuedCredentials {
  _key: string;
  _secret: string | null;
}

export interface CallerEvidence {
  /** Lower-case handle from a valid session cookie. */
  sessionHandle?: string | null;
  key?: string;
  secret?: string;
}

const CREDENTIAL_TEXT = /^[\w-]{1,100}$/;
const LAST_USED_RESOLUTION_MS = 60 * 60 * 1000;

function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && timingSafeEqual(left, right);
}

/**
 * Authentication of the grant-specific exports: a login session, or the
 * `_key`/`_secret` pair a session call handed out. The secret is 256 random
 * bits; like API keys, only its SHA-256 is stored and compared in constant time.
 */
export function exportAuthService(credentials: ExportCredentialsRepository, clock: () => number = Date.now) {
  return {
    async identify(evidence: CallerEvidence): Promise<ExportCaller> {
      if (evidence.key !== undefined || evidence.secret !== undefined) {
        if (!evidence.key || !evidence.secret) {
          throw new AppError('not_authenticated', 'Send both _key and _secret, as handed out in meta.api_key.');
        }
        // Issued keys are base64url; anything else cannot match (and never reaches the database).
        const row = CREDENTIAL_TEXT.test(evidence.key) ? await credentials.findByKey(evidence.key) : undefined;
        if (!row || !sameHash(row.secret_hash, hashSecret(evidence.secret))) {
          throw new AppError('not_authenticated', 'The _key and _secret do not match any export credentials.');
        }
        const recordUse = async () => {
          const now = clock();
          if (row.last_used_at === null || now - row.last_used_at > LAST_USED_RESOLUTION_MS) await credentials.touch(row.id, now);
        };
        return { profileId: row.profile_id, handle: '', via: 'credentials', recordUse };
      }
      if (evidence.sessionHandle) {
        const profile = await credentials.profileByHandleKey(evidence.sessionHandle);
        return { profileId: profile?.id ?? null, handle: profile?.handle ?? evidence.sessionHandle, via: 'session', recordUse: async () => {} };
      }
      throw new AppError(
        'not_authenticated',
        'This export is for the grant’s team: log in at /grants/login, or add _key and _secret to the URL.',
      );
    },

    /** The profile's credentials, created on first use; the secret only then. */
    async credentialsFor(profileId: number): Promise<IssuedCredentials> {
      const existing = await credentials.findByProfile(profileId);
      if (existing) return { _key: existing.api_key, _secret: null };
      const key = randomBytes(18).toString('base64url');
      const secret = randomBytes(32).toString('base64url');
      const inserted = await credentials.insertIfAbsent({
        profile_id: profileId,
        api_key: key,
        secret_hash: hashSecret(secret),
        created_at: clock(),
        last_used_at: null,
      });
      if (inserted) return { _key: key, _secret: secret };
      // A concurrent first call created them: its response carried the secret.
      const winner = await credentials.findByProfile(profileId);
      return { _key: winner!.api_key, _secret: null };
    },

    /** Deletes a profile's credentials (a lost secret); the next session call issues new ones. */
    async resetCredentials(handle: string): Promise<{ handle: string; deleted: boolean }> {
      const profile = await credentials.profileByHandleKey(handleKey(handle));
      if (!profile) throw new AppError('not_found', `There is no profile with the handle ${handle}.`);
      return { handle: profile.handle, deleted: (await credentials.deleteForProfile(profile.id)) > 0 };
    },
  };
}

export type ExportAuthService = ReturnType<typeof exportAuthService>;
