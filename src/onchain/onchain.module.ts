import type { Config } from '../config/index.js';
import type { AccountService } from '../scoring/accounts/accounts.service.js';
import type { V2ScoreService } from '../scoring/scores/v2-scores.service.js';
import type { TrustedIssuerService } from '../scoring/stamps/issuers.service.js';
import type { StampsRepository } from '../scoring/stamps/stamps.repository.js';
import { chainDeployments } from './chain-deployments.js';
import { decoderScoreReader } from './decoder-score-reads.js';
import { onchainService } from './onchain.service.js';
import { loadAttestationSigner } from './signer-key.js';
import { verifierReader } from './verifier-reads.js';

export type OnchainModuleConfig = Pick<
  Config,
  'env' | 'dataDir' | 'attestationSignerKey' | 'onchainConfigFile' | 'onchainRpcUrls' | 'attestationTtlDays' | 'outboundTimeoutMs'
>;

export interface OnchainModuleDeps {
  v2: Pick<V2ScoreService, 'scoreNow'>;
  accounts: Pick<AccountService, 'scorerOfAccount' | 'getScorer'>;
  stamps: Pick<StampsRepository, 'liveForScoring'>;
  issuers: Pick<TrustedIssuerService, 'current'>;
}

/** The onchain layer's service: the signer key (loaded once), the deployment file, the verifier's and decoder's reads. */
export async function createOnchainModule(config: OnchainModuleConfig, deps: OnchainModuleDeps) {
  const signer = await loadAttestationSigner(config);
  return {
    signer: signer === null ? null : { address: signer.address },
    service: onchainService({
      ...deps,
      deployments: chainDeployments(config),
      signer,
      readVerifier: verifierReader({ timeoutMs: config.outboundTimeoutMs }),
      readDecoderScore: decoderScoreReader({ timeoutMs: config.outboundTimeoutMs }),
      attestationTtlDays: config.attestationTtlDays,
    }),
  };
}

export type OnchainModule = Awaited<ReturnType<typeof createOnchainModule>>;
