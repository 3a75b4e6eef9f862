import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { type ChainDeployment, readDeploymentFile, writeChainDeployment } from '../../src/onchain/deployment-file.js';
import { withDeploymentFileLock } from '../../src/onchain/deployment-lock.js';
import { temporaryDeploymentFile } from '../helpers/onchain-chain.js';

function entry(chainId: number): ChainDeployment {
  const address = `0x${chainId.toString(16).padStart(40, '0')}`;
  const uid = `0x${'ab'.repeat(32)}`;
  return {
    chain_id: chainId, eas: address, schema_registry: address, verifier: address, resolver: address, decoder: address,
    score_schema: 's', score_schema_uid: uid, passport_schema: 'p', passport_schema_uid: uid, eas_version: '1.4.0', signers: [],
  };
}

describe('the deployment file lock', () => {
  it('keeps every chain when many commands write the file at once, and leaves no lock behind', async () => {
    const file = temporaryDeploymentFile();
    const chains = Array.from({ length: 12 }, (_, i) => i + 1);
    await Promise.all(chains.map((id) => withDeploymentFileLock(file, () => writeChainDeployment(file, entry(id)))));
    expect((await readDeploymentFile(file)).chains.map((c) => c.chain_id)).toEqual(chains);
    expect(existsSync(`${file}.lock`)).toBe(false);
  });

  it('is released when the work fails', async () => {
    const file = temporaryDeploymentFile();
    await expect(withDeploymentFileLock(file, () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await withDeploymentFileLock(file, () => writeChainDeployment(file, entry(5)));
    expect((await readDeploymentFile(file)).chains).toHaveLength(1);
  });
});
