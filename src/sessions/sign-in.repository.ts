import type { Kysely } from 'kysely';
import { type Database, writeTransaction } from '../db/connection.js';
import type { WalletSiweNoncesTable } from '../db/tables/wallet.js';

/**
 * The tables of one sign-in flow: its SIWE nonces and its sessions. Each flow has its own pair,
 * so a nonce can only ever be used by the flow that issued it.
 */
export type SignInStore = 'portal' | 'wallet';

const storeTables = {
  portal: { nonces: 'portal_siwe_nonces', sessions: 'portal_sessions', ownsAccount: true },
  wallet: { nonces: 'wallet_siwe_nonces', sessions: 'wallet_sessions', ownsAccount: false },
} as const;

type NonceTable = (typeof storeTables)[SignInStore]['nonces'];
type SessionTable = (typeof storeTables)[SignInStore]['sessions'];

/** A session row as both flows store it; `account_id` only where the flow's sessions act for an account. */
export interface SignInSessionRow {
  /** Hex SHA-256 of the token: the token itself is never stored. */
  token_hash: string;
  /** Lower-case address proven by the sign-in. */
  address: string;
  created_at: number;
  expires_at: number;
  account_id?: number;
}

/**
 * The one view of both flows' tables: their nonce tables have the same columns, and their
 * session tables differ only in the portal's `account_id`.
 */
type SignInTables = Record<NonceTable, WalletSiweNoncesTable> & Record<SessionTable, Required<SignInSessionRow>>;

/**
 * Queries of Sign-In with Ethereum: single-use nonces and session rows (token hashes only) of
 * one flow's tables. The only writer of `portal_siwe_nonces`, `portal_sessions`,
 * `wallet_siwe_nonces` and `wallet_sessions`.
 */
export function signInRepository(database: Database, store: SignInStore) {
  const tables = storeTables[store];
  const db = database.db as unknown as Kysely<SignInTables>;
  const sessionColumns = tables.ownsAccount ? (['address', 'expires_at', 'account_id'] as const) : (['address', 'expires_at'] as const);

  return {
    async insertNonce(nonce: string, now: number, expiresAt: number): Promise<void> {
      await db.insertInto(tables.nonces).values({ nonce, created_at: now, expires_at: expiresAt, used_at: null }).execute();
    },

    async isNonceUsable(nonce: string, now: number): Promise<boolean> {
      const row = await db
        .selectFrom(tables.nonces)
        .select('nonce')
        .where('nonce', '=', nonce)
        .where('used_at', 'is', null)
        .where('expires_at', '>', now)
        .executeTakeFirst();
      return row !== undefined;
    },

    /**
     * Marks the nonce used and stores the session in one transaction; false (and nothing
     * stored) when the nonce was used or expired meanwhile.
     */
    async consumeNonceAndCreateSession(nonce: string, session: SignInSessionRow, now: number): Promise<boolean> {
      const row = { token_hash: session.token_hash, address: session.address, created_at: session.created_at, expires_at: session.expires_at };
      return writeTransaction(database, async (trx) => {
        const view = trx as unknown as Kysely<SignInTables>;
        const result = await view
          .updateTable(tables.nonces)
          .set({ used_at: now })
          .where('nonce', '=', nonce)
          .where('used_at', 'is', null)
          .where('expires_at', '>', now)
          .executeTakeFirst();
        if (Number(result.numUpdatedRows) !== 1) return false;
        await view
          .insertInto(tables.sessions)
          .values(tables.ownsAccount ? { ...row, account_id: session.account_id as number } : (row as Required<SignInSessionRow>))
          .execute();
        return true;
      });
    },

    async findSession(tokenHash: string, now: number): Promise<Omit<SignInSessionRow, 'token_hash' | 'created_at'> | undefined> {
      return db
        .selectFrom(tables.sessions)
        .select(sessionColumns)
        .where('token_hash', '=', tokenHash)
        .where('expires_at', '>', now)
        .executeTakeFirst();
    },

    async deleteSession(tokenHash: string): Promise<boolean> {
      const result = await db.deleteFrom(tables.sessions).where('token_hash', '=', tokenHash).executeTakeFirst();
      return Number(result.numDeletedRows) === 1;
    },

    /** Removes nonces and sessions that expired before `cutoff`. */
    async sweepExpired(cutoff: number): Promise<void> {
      await db.deleteFrom(tables.nonces).where('expires_at', '<', cutoff).execute();
      await db.deleteFrom(tables.sessions).where('expires_at', '<', cutoff).execute();
    },
  };
}

export type SignInRepository = ReturnType<typeof signInRepository>;
