/** A fresh anvil chain with Stampgate's contracts deployed by the deploy service, for the onchain tests. */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Address, Hex, PrivateKeyAccount } from 'viem';
import { deployOnchain, type DeployResult } from '../../src/onchain/deploy.service.js';
import { type Anvil, startAnvil } from './evm.js';
import { abiOf, anvilKey, type AttestationRequest, type RequestSignature } from './onchain.js';

export interface DeployedChain {
  anvil: Anvil;
  deployment: DeployResult;
  ownerKey: Hex;
  /** Submits a signed request from anvil account `from` (anyone may). */
  submit(request: AttestationRequest, signature: RequestSignature, options?: { value?: bigint; from?: number }): Promise<Hex>;
  /** Simulates the submission: the custom error of a refusal, without sending anything. */
  simulate(request: AttestationRequest, signature: RequestSignature, options?: { value?: bigint; verifier?: Address }): Promise<unknown>;
  nonceOf(recipient: Address): Promise<bigint>;
  blockTime(): Promise<bigint>;
}

export const verifierAbi = abiOf('StampgateVerifier');
export const decoderAbi = abiOf('StampgateDecoder');
export const resolverAbi = abiOf('StampgateResolver');
export const easAbi = abiOf('EAS');

export function temporaryDeploymentFile(): string {
  return join(mkdtempSync(join(tmpdir(), 'stampgate-onchain-')), 'onchain.json');
}

export async function startDeployedChain(chainId: number, signer: PrivateKeyAccount, deploymentFile: string): Promise<DeployedChain> {
  const anvil = await startAnvil({ chainId });
  const ownerKey = anvilKey(0);
  const deployment = await deployOnchain({
    rpcUrl: anvil.url,
    ownerKey,
    signerAddress: signer.address,
    deploymentFile,
    saveRpcUrl: true,
    timeoutMs: 10_000,
  });
  const verifier = deployment.verifier as Address;
  return {
    anvil,
    deployment,
    ownerKey,
    async submit(request, signature, options = {}) {
      const wallet = anvil.wallets[options.from ?? 2]!;
      const hash = await wallet.writeContract({
        address: verifier,
        abi: verifierAbi,
        functionName: 'verifyAndAttest',
        args: [request, signature.v, signature.r, signature.s],
        value: options.value ?? request.fee,
      });
      const receipt = await anvil.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 });
      if (receipt.status !== 'success') throw new Error('verifyAndAttest reverted');
      return hash;
    },
    simulate: (request, signature, options = {}) =>
      anvil.publicClient.simulateContract({
        address: options.verifier ?? verifier,
        abi: verifierAbi,
        functionName: 'verifyAndAttest',
        args: [request, signature.v, signature.r, signature.s],
        value: options.value ?? request.fee,
        account: anvil.wallets[2]!.account,
      }),
    nonceOf: async (recipient) =>
      (await anvil.publicClient.readContract({ address: verifier, abi: verifierAbi, functionName: 'recipientNonces', args: [recipient] })) as bigint,
    blockTime: async () => (await anvil.publicClient.getBlock({ blockTag: 'latest' })).timestamp,
  };
}
