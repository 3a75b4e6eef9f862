/**
 * Gas of the onchain layer, measured on a fresh anvil chain with the committed artifacts:
 *
 *   npm run gas:onchain
 *
 * `verifyAndAttest` of one score and one passport attestation with 5, 20 and 40 stamps each (the
 * gas used by the transaction), and each decoder view as `eth_estimateGas` of the call minus the
 * 21,000 intrinsic gas (the figure docs/onchain.md gives).
 */
import { type Address, encodeFunctionData, type Hex, toHex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deployOnchain } from '../src/onchain/deploy.service.js';
import { startAnvil } from '../test/helpers/evm.js';
import { abiOf, anvilKey, scoreAndPassportRequest, signRequest } from '../test/helpers/onchain.js';

const INTRINSIC_GAS = 21_000n;

async function main(): Promise<void> {
  const anvil = await startAnvil({ chainId: 10 });
  const dir = mkdtempSync(join(tmpdir(), 'stampgate-gas-'));
  try {
    const signer = privateKeyToAccount(generatePrivateKey());
    const deployment = await deployOnchain({
      rpcUrl: anvil.url, ownerKey: anvilKey(0), signerAddress: signer.address, deploymentFile: join(dir, 'onchain.json'), saveRpcUrl: false, timeoutMs: 10_000,
    });
    const verifier = deployment.verifier as Address;
    const decoder = deployment.decoder as Address;
    const verifierAbi = abiOf('StampgateVerifier');
    const decoderAbi = abiOf('StampgateDecoder');
    const rows: [string, bigint][] = [];
    let lastRecipient: Address = anvil.wallets[1]!.account.address;

    for (const count of [5, 20, 40]) {
      const recipient = privateKeyToAccount(generatePrivateKey()).address;
      const now = (await anvil.publicClient.getBlock()).timestamp;
      const providers = Array.from({ length: count }, (_, i) => `Provider#${i + 1}`);
      const request = scoreAndPassportRequest(deployment, recipient, {
        nonce: 0n,
        now,
        score: { stamps: providers.map((provider) => ({ provider, score: 10_000n })) },
        stamps: providers.map((provider, i) => ({ provider, hash: toHex(BigInt(i + 1), { size: 32 }), issuance_date: now - 86_400n, expiration_date: now + 60n * 86_400n })),
      });
      const signature = await signRequest(signer, 10, verifier, request);
      const hash = await anvil.wallets[2]!.writeContract({ address: verifier, abi: verifierAbi, functionName: 'verifyAndAttest', args: [request, signature.v, signature.r, signature.s] });
      const receipt = await anvil.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 });
      if (receipt.status !== 'success') throw new Error(`verifyAndAttest with ${count} stamps reverted`);
      rows.push([`verifyAndAttest, score + passport of ${count} stamps each (transaction gas used)`, receipt.gasUsed]);
      lastRecipient = recipient;
    }

    const view = async (label: string, functionName: string, args: readonly unknown[]) => {
      const data: Hex = encodeFunctionData({ abi: decoderAbi, functionName, args });
      const gas = await anvil.publicClient.estimateGas({ to: decoder, data, account: anvil.wallets[3]!.account });
      rows.push([label, gas - INTRINSIC_GAS]);
    };
    await view('getScore(scorerId, user)', 'getScore', [7n, lastRecipient]);
    await view('isHuman(scorerId, user)', 'isHuman', [7n, lastRecipient]);
    await view('getScore of an address with no score', 'getScore', [7n, anvil.wallets[4]!.account.address]);
    await view('getPassport(user), 40 stamps', 'getPassport', [lastRecipient]);

    console.log('| Call | Gas |');
    console.log('| --- | ---: |');
    for (const [label, gas] of rows) console.log(`| ${label} | ${gas.toLocaleString('en-US')} |`);
  } finally {
    await anvil.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
