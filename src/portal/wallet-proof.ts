import type { Hex } from 'viem';
import { recoverPersonalSignAddress } from '../chain/signatures.js';
import { AppError } from '../errors.js';

export interface OwnershipClaim {
  /** Lower-case address the message names. */
  address: string;
  message: string;
  signature: string;
  /** The message's Chain ID (a contract wallet's signature is checked on that chain). */
  chainId: number;
}

/**
 * The one place the portal's sign-in checks that the message's address signed it. Today an
 * externally owned account's personal_sign (ecrecover); the shared smart-wallet proof (ERC-1271,
 * ERC-6492) replaces the body when it lands, and nothing else changes.
 */
export async function proveWalletOwnership(claim: OwnershipClaim): Promise<void> {
  let signer: string;
  try {
    signer = recoverPersonalSignAddress(claim.message, claim.signature as Hex);
  } catch {
    throw new AppError('invalid_signature', 'The signature is malformed: send the 65-byte personal_sign signature as 0x-prefixed hex.');
  }
  if (signer !== claim.address) {
    throw new AppError('invalid_signature', 'The signature was not made by the message\'s address over this exact message.');
  }
}
