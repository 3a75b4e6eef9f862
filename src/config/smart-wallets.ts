/** Smart-wallet signature settings: the endpoint that checks ERC-1271 and ERC-6492 signatures. */
import { DEFAULT_MAX_SIGNATURE_BYTES } from '../chain/wallet-signatures.js';
import { httpUrl, integer, optionalUrl, RPC_URL_EXAMPLE, type Settings } from './parse.js';

export interface SmartWalletConfig {
  smartWalletRpcUrl: string | null;
  smartWalletRpcTimeoutMs: number;
  smartWalletMaxSignatureBytes: number;
}

/** The smallest cap that still lets an EOA's 65-byte signature through. */
const EOA_SIGNATURE_BYTES = 65;

export const smartWalletSettings: Settings<SmartWalletConfig> = {
  smartWalletRpcUrl: {
    key: 'smartWalletRpcUrl',
    name: 'SMART_WALLET_RPC_URL',
    description:
      'Ethereum JSON-RPC endpoint that verifies contract-wallet signatures (ERC-1271, ERC-6492) for submissions and wallet sign-in; ' +
      '`off` = EOA signatures only',
    defaultText: 'ETH_RPC_URL if set',
    parse: (raw, env) => {
      if (raw !== undefined && raw.trim().toLowerCase() === 'off') return null;
      if (raw !== undefined && raw.trim() !== '') return httpUrl('SMART_WALLET_RPC_URL', raw, RPC_URL_EXAMPLE);
      // Same chain, same endpoint: an operator who set one for the bounty read need not repeat it.
      return optionalUrl('ETH_RPC_URL')(env.ETH_RPC_URL);
    },
  },

  smartWalletRpcTimeoutMs: {
    key: 'smartWalletRpcTimeoutMs',
    name: 'SMART_WALLET_RPC_TIMEOUT_MS',
    description: 'Time limit of one contract-wallet signature check (and of the chain-id lookup); past it the request gets 502 `upstream_unavailable` and its nonce stays usable',
    defaultText: '5000',
    parse: integer('SMART_WALLET_RPC_TIMEOUT_MS', 100, 60_000, 5000),
  },

  smartWalletMaxSignatureBytes: {
    key: 'smartWalletMaxSignatureBytes',
    name: 'SMART_WALLET_MAX_SIGNATURE_BYTES',
    description: `Longest wallet signature accepted, in bytes (65 to ${DEFAULT_MAX_SIGNATURE_BYTES}; the request schemas admit ${DEFAULT_MAX_SIGNATURE_BYTES}); longer is refused before any RPC`,
    defaultText: String(DEFAULT_MAX_SIGNATURE_BYTES),
    parse: integer('SMART_WALLET_MAX_SIGNATURE_BYTES', EOA_SIGNATURE_BYTES, DEFAULT_MAX_SIGNATURE_BYTES, DEFAULT_MAX_SIGNATURE_BYTES),
  },
};
