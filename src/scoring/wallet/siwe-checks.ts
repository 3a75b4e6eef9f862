import { AppError } from '../../errors.js';
import type { SiweFields } from './siwe.js';
import type { SiweSite } from './wallet-sessions.service.js';

/** How far a message's Issued At and Not Before may lie ahead of our clock. */
export const SIWE_CLOCK_SKEW_MS = 5 * 60_000;

function refuse(detail: string): never {
  throw new AppError('invalid_siwe_message', detail);
}

/**
 * Whether `uri` is on `origin`, compared as text: the URI must begin with the origin exactly
 * as this service spells it, followed by its end, a path, a query or a fragment. Comparing
 * parsed URLs would let `http://0x7f000001/` or `http://%31%32%37.0.0.1/` stand for
 * `http://127.0.0.1`, and `https://user@host/` for `https://host`.
 */
function isOnOrigin(uri: string, origin: string): boolean {
  if (!uri.startsWith(origin)) return false;
  if (!/^(?:$|[/?#])/.test(uri.slice(origin.length))) return false;
  try {
    const url = new URL(uri);
    return url.origin === origin && url.username === '' && url.password === '';
  } catch {
    return false;
  }
}

/**
 * The strict EIP-4361 checks of decisions.md "Security baseline", shared by the wallet sign-in
 * and the portal's sign-in, in this order: domain byte for byte, scheme, URI on this origin, an allowed Chain ID, Issued At not
 * ahead, an Expiration Time not past, Not Before respected. Cheap: no database, no signature.
 */
export function checkSiweFields(fields: SiweFields, site: SiweSite, allowedChainIds: readonly number[], now: number): void {
  if (fields.domain !== site.host) refuse(`The message is for "${fields.domain}", not for this service ("${site.host}").`);
  if (fields.scheme !== undefined && `${fields.scheme}:` !== site.protocol) {
    refuse(`The message's scheme "${fields.scheme}" is not this service's (${site.protocol.slice(0, -1)}).`);
  }
  if (!isOnOrigin(fields.uri, site.origin)) refuse(`The message's URI must be on ${site.origin}, written as such, without user information.`);
  if (!allowedChainIds.includes(fields.chainId)) {
    refuse(`The message's Chain ID ${fields.chainId} is not accepted here (accepted: ${allowedChainIds.join(', ')}).`);
  }
  if (fields.issuedAt.getTime() > now + SIWE_CLOCK_SKEW_MS) refuse('The message\'s Issued At lies in the future.');
  if (fields.expirationTime === undefined) refuse('The message must have an Expiration Time.');
  if (fields.expirationTime.getTime() <= now) refuse(`The message expired at ${fields.expirationTime.toISOString()}.`);
  if (fields.notBefore !== undefined && fields.notBefore.getTime() > now + SIWE_CLOCK_SKEW_MS) {
    refuse(`The message is not valid before ${fields.notBefore.toISOString()}.`);
  }
}
