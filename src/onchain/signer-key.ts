/**
 * The attestation signer: `ATTESTATION_SIGNER_KEY`, or in development a key generated once into
 * `DATA_DIR/attestation-signer.key`, so that the service that signs and `onchain deploy` that
 * authorises it agree on one address without configuration.
 */
import { type Hex, isHex } from 'viem';
import { generatePrivateKey, privateKeyToAddress } from 'viem/accounts';
import type { Config } from '../config/index.js';
import { loadOrCreateKeyFile } from '../config/key-files.js';

export const ATTESTATION_SIGNER_KEY_FILE = 'attestation-signer.key';

export async function loadAttestationSigner(
  config: Pick<Config, 'attestationSignerKey' | 'dataDir' | 'env'>,
): Promise<{ privateKey: Hex; address: Hex }> {
  let privateKey = config.attestationSignerKey as Hex | null;
  if (privateKey === null) {
    if (config.env === 'production') throw new Error('ATTESTATION_SIGNER_KEY is required in production');
    privateKey = await loadOrCreateKeyFile(config.dataDir, ATTESTATION_SIGNER_KEY_FILE, {
      generate: generatePrivateKey,
      parse: (contents, path) => {
        const key = contents.trim().toLowerCase();
        if (!isHex(key) || key.length !== 66) throw new Error(`${path} does not hold a 0x-prefixed secp256k1 private key`);
        return key;
      },
    });
  }
  return { privateKey, address: privateKeyToAddress(privateKey) };
}
