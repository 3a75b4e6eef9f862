import { privateKeyToAccount } from 'viem/accounts';
import type { AppContext } from '../../src/app/container.js';
import { issueCredential } from '../../src/scoring/stamps/dev-issuer.js';

const day = 86_400_000;

export interface StampSpec {
  provider: string;
  nullifiers?: string[];
  expiresInMs?: number;
  issuedAt?: Date;
}

/** Issues real development-issuer credentials for `address` and stores them; fails the test if any is refused. */
export async function giveStamps(ctx: AppContext, address: string, specs: (string | StampSpec)[]) {
  const key = ctx.devIssuerKey;
  if (!key) throw new Error('giveStamps needs a development context');
  const credentials = specs.map((spec) => {
    const s = typeof spec === 'string' ? { provider: spec } : spec;
    const issuedAt = s.issuedAt ?? new Date();
    return issueCredential({
      privateKey: key,
      address,
      provider: s.provider,
      nullifiers: s.nullifiers,
      issuedAt,
      expiresAt: new Date(Date.now() + (s.expiresInMs ?? 90 * day)),
    });
  });
  const report = await ctx.stamps.importCredentials(credentials);
  const refused = report.results.filter((r) => r.status === 'rejected');
  if (refused.length > 0) throw new Error(`stamps refused: ${JSON.stringify(refused)}`);
  return credentials;
}

/** A wallet with a known key, for signatures. */
export function testWallet(seed: number) {
  const privateKey = `0x${seed.toString(16).padStart(64, '0')}` as const;
  const account = privateKeyToAccount(privateKey);
  return { account, address: account.address.toLowerCase() };
}
