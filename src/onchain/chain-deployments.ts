/**
 * The chains this service signs for, from the deployment file. The file is read again whenever it
 * changed (its size, modification time or inode), so a `stampgate onchain deploy` or a signer
 * change shows without a restart, while an unchanged file costs one `stat` per request. That
 * `stat` is synchronous: a local file's metadata is a few microseconds, where the promise form's
 * round trip through the thread pool cost about 90 µs of CPU, half of what signing an
 * attestation adds to a score.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../config/index.js';
import { AppError } from '../errors.js';
import { type ChainDeployment, DeploymentFileError, readDeploymentFile } from './deployment-file.js';

export type OnchainFileConfig = Pick<Config, 'onchainConfigFile' | 'dataDir' | 'onchainRpcUrls'>;

export interface ChainDeployments {
  /** Every deployed chain; throws 503 `onchain_not_configured` when there is none (no file, or an empty or invalid one). */
  all(): Promise<ChainDeployment[]>;
  /** Every deployed chain, none (`[]`) when there is no file or an empty one; 503 only for an invalid file. */
  deployed(): Promise<ChainDeployment[]>;
  /** One chain; 404 `chain_not_found` when the file does not list it. */
  find(chainId: number): Promise<ChainDeployment>;
  /** The chain's RPC URL (`ONCHAIN_RPC_URL_<id>` first, then the file's); 503 when it has none. */
  rpcUrl(chain: ChainDeployment): string;
}

export function deploymentFilePath(config: Pick<Config, 'onchainConfigFile' | 'dataDir'>): string {
  return config.onchainConfigFile ?? join(config.dataDir, 'onchain.json');
}

const notConfigured = (detail: string) => new AppError('onchain_not_configured', detail);

export function chainDeployments(config: OnchainFileConfig): ChainDeployments {
  const path = deploymentFilePath(config);
  let cached: { stamp: string; chains: ChainDeployment[] | DeploymentFileError } | null = null;

  /** The file's chains; null when it does not exist. */
  async function load(): Promise<ChainDeployment[] | null> {
    let stamp: string;
    try {
      const info = statSync(path);
      stamp = `${info.ino}:${info.size}:${info.mtimeMs}`;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      cached = null;
      return null;
    }
    if (cached?.stamp !== stamp) {
      let chains: ChainDeployment[] | DeploymentFileError;
      try {
        chains = (await readDeploymentFile(path)).chains;
      } catch (error) {
        if (!(error instanceof DeploymentFileError)) throw error;
        chains = error;
      }
      cached = { stamp, chains };
    }
    // The file's path and contents are the operator's: the answer only says what to do.
    if (cached.chains instanceof DeploymentFileError) throw notConfigured('The onchain deployment file is not valid; the operator must run `stampgate onchain deploy` again.');
    return cached.chains;
  }

  async function all(): Promise<ChainDeployment[]> {
    const chains = await load();
    if (chains === null) throw notConfigured('No chain is deployed: run `stampgate onchain deploy` (the deployment file does not exist).');
    if (chains.length === 0) throw notConfigured('No chain is deployed: run `stampgate onchain deploy`.');
    return chains;
  }

  return {
    all,
    deployed: async () => (await load()) ?? [],
    async find(chainId) {
      const chain = (await all()).find((c) => c.chain_id === chainId);
      if (!chain) throw new AppError('chain_not_found', `Chain ${chainId} is not deployed here; GET /v2/onchain/chains lists the chains.`);
      return chain;
    },
    rpcUrl(chain) {
      const url = config.onchainRpcUrls[chain.chain_id] ?? chain.rpc_url;
      if (!url) throw notConfigured(`Chain ${chain.chain_id} has no RPC URL: set ONCHAIN_RPC_URL_${chain.chain_id}.`);
      return url;
    },
  };
}
