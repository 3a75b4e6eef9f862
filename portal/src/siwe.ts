import { getAddress, stringToHex } from 'viem';
import { api, type Session } from './api.js';

/** The injected wallet (EIP-1193). */
interface Eip1193Provider {
  request(args: { method: string; params?: unknown[] }): Promise<unknown>;
}

declare global {
  interface Window {
    ethereum?: Eip1193Provider;
  }
}

interface NonceOffer {
  nonce: string;
  domain: string;
  uri: string;
  chainId: number;
  chainIds: number[];
  statement: string;
  expiresAt: string;
}

/** The EIP-4361 message, laid out exactly as the EIP (and the server's strict reader) wants it. */
export function siweMessage(offer: NonceOffer, address: string, chainId: number, issuedAt: Date): string {
  return [
    `${offer.domain} wants you to sign in with your Ethereum account:`,
    getAddress(address),
    '',
    offer.statement,
    '',
    `URI: ${offer.uri}`,
    'Version: 1',
    `Chain ID: ${chainId}`,
    `Nonce: ${offer.nonce}`,
    `Issued At: ${issuedAt.toISOString()}`,
    `Expiration Time: ${offer.expiresAt}`,
  ].join('\n');
}

/** Asks the wallet for its account, has it sign a fresh sign-in message, and opens a session. */
export async function signInWithWallet(): Promise<Session> {
  const wallet = window.ethereum;
  if (!wallet) throw new Error('No Ethereum wallet was found in this browser. Install or unlock one, then try again.');
  const accounts = (await wallet.request({ method: 'eth_requestAccounts' })) as string[];
  const address = accounts[0];
  if (!address) throw new Error('The wallet shared no account.');
  const offer = await api<NonceOffer>('GET', '/v2/account/siwe-nonce');
  // A smart wallet's signature only holds on its own chain: sign for it when the server accepts it.
  const walletChain = Number.parseInt(String(await wallet.request({ method: 'eth_chainId' }).catch(() => '')), 16);
  const chainId = offer.chainIds.includes(walletChain) ? walletChain : offer.chainId;
  const message = siweMessage(offer, address, chainId, new Date());
  const signature = (await wallet.request({ method: 'personal_sign', params: [stringToHex(message), address] })) as string;
  return api<Session>('POST', '/v2/account/session', { message, signature });
}
