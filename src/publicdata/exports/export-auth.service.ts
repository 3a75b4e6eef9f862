import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { AppError } from '../../errors.js';
import type { ExportCredentialsRepository } from './export-credentials.repository.js';
import type { LoginIdentity } from './oauth.js';
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
  /** A valid session cookie's profile (bound at login) and handle. */
  session?: { profileId: number | null; handle: string } | null;
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

function newPair(secret: string): { api_key: string; secret_hash: string } {
  return { api_key: randomBytes(18).toString('base64url'), secret_hash: hashSecret(secret) };
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
      if (evidence.session) {
        return { profileId: evidence.session.profileId, handle: evidence.session.handle, via: 'session', recordUse: async () => {} };
      }
      throw new AppError(
        'not_authenticated',
        'This export is for the grant’s team: log in at /grants/login, or add _key and _secret to the URL.',
      );
    },

    /**
     * The profile a login is: the one bound to the provider's subject id, else the profile of
     * the login's handle if no subject is bound to it yet (it is bound now). A handle whose
     * profile belongs to another subject gives no profile: a reused username inherits nothing.
     */
    async profileForLogin(identity: LoginIdentity): Promise<number | null> {
      const bound = await credentials.profileBySubject(identity.subject);
      if (bound) return bound.id;
      return (await credentials.bindSubject(identity.handle, identity.subject))?.id ?? null;
    },

    /** Creates the profile's credentials at login if it has none; the secret waits for the first session response. */
    async ensureCredentials(profileId: number): Promise<void> {
      if (await credentials.findByProfile(profileId)) return;
      const secret = randomBytes(32).toString('base64url');
      await credentials.insertIfAbsent({ ...newPair(secret), profile_id: profileId, created_at: clock(), last_used_at: null, pending_secret: secret });
    },

    /**
     * `meta.api_key` of a session response: the secret only in the first GET after creation; null
     * without credentials. Never creates. `takeSecret` is false for HEAD (Fastify runs the GET
     * handler for it): a response whose body nobody reads must not use up the one-time secret.
     */
    async credentialsFor(profileId: number, takeSecret: boolean): Promise<IssuedCredentials | null> {
      const existing = await credentials.findByProfile(profileId);
      if (!existing) return null;
      return { _key: existing.api_key, _secret: takeSecret ? await credentials.takePendingSecret(existing.id) : null };
    },

    /** New key and secret for the profile (POST); the old pair stops working at once. The secret is returned, never stored. */
    async rotateCredentials(profileId: number): Promise<{ _key: string; _secret: string }> {
      const secret = randomBytes(32).toString('base64url');
      const pair = newPair(secret);
      await credentials.replace({ ...pair, profile_id: profileId, created_at: clock(), last_used_at: null, pending_secret: null });
      return { _key: pair.api_key, _secret: secret };
    },

    /** Deletes a profile's credentials (a lost secret); the next login creates new ones. */
    async resetCredentials(handle: string): Promise<{ handle: string; deleted: boolean }> {
      const profile = await credentials.profileByHandleKey(handleKey(handle));
      if (!profile) throw new AppError('not_found', `There is no profile with the handle ${handle}.`);
      return { handle: profile.handle, deleted: (await credentials.deleteForProfile(profile.id)) > 0 };
    },
  };
}

export type ExportAuthService = ReturnType<typeof exportAuthService>;
