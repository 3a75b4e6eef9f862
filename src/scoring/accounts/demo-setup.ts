import type { Config } from '../../config/index.js';
import type { Account, AccountService, Scorer } from './accounts.service.js';
import type { ApiKeyService } from './api-keys.service.js';

export interface DemoSetup {
  account: Account;
  scorer: Scorer;
  key: string;
}

/**
 * On a development database with no account yet, creates what a first-time
 * user needs to make a request: an account, a binary scorer and a tier-1 key.
 */
export async function ensureDemoSetup(ctx: {
  config: Pick<Config, 'env'>;
  accounts: Pick<AccountService, 'hasAnyAccount' | 'createAccount' | 'createScorer'>;
  apiKeys: Pick<ApiKeyService, 'create'>;
}): Promise<DemoSetup | null> {
  if (ctx.config.env !== 'development' || (await ctx.accounts.hasAnyAccount())) return null;
  const account = await ctx.accounts.createAccount('Demo account');
  const scorer = await ctx.accounts.createScorer(account.id, { name: 'Demo binary scorer', type: 'binary' });
  const { key } = await ctx.apiKeys.create(account.id, { name: 'demo', tier: 1 });
  return { account, scorer, key };
}
