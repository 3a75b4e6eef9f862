import { AppError } from '../errors.js';
import type { SiweFields } from './siwe.js';

/** How far a message's Issued At and Not Before may lie ahead of our clock. */
export const SIWE_CLOCK_SKEW_MS = 5 * 60_000;

/** Where this service is reached, which a sign-in message must name. */
export interface SiweSite {
  /** `https:` or `http:`. */
  protocol: string;
  /** Lower-case authority (host and a non-default port): what the message's domain must be. */
  host: string;
  /** `scheme://host[:port]`: the message's URI must be on it. */
  origin: string;
  /** Suggested URI for the message: the base URL without a trailing slash. */
  uri: string;
}

/** The site of a base URL (`PUBLIC_BASE_URL`, else the request's scheme and Host). */
export function siweSite(baseUrl: string): SiweSite {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new AppError('invalid_request', 'The request\'s Host header does not name a valid host.');
  }
  // Rebuilt from the parsed URL, so that the offered URI always starts with the origin as spelt here.
  return { protocol: url.protocol, host: url.host, origin: url.origin, uri: `${url.origin}${url.pathname.replace(/\/+$/, '')}` };
}

/**
 * What one sign-in flow lets a signature open, as its messages must say. A message is accepted
 * by at most one flow: a flow whose statement is required refuses any other, and a flow whose
 * statement may be left out still refuses every other statement, so no two flows share a message.
 */
export interface SignInPurpose {
  /** The statement the flow offers, and the only one it accepts. */
  statement: string;
  /** Whether a message may leave the statement out. */
  statementRequired: boolean;
  /**
   * The path on this service's origin that the message's URI must be (or lie under), e.g.
   * `/portal`; null: any path on the origin (the offered URI is then the base URL's).
   */
  uriPath: string | null;
  /** The route that issues the flow's nonces, named when a nonce is refused. */
  nonceRoute: string;
}

function refuse(detail: string): never {
  throw new AppError('invalid_siwe_message', detail);
}

/** Whether `rest` (what follows an origin or path as written) ends there or goes on with a path, query or fragment. */
const endsOrGoesOn = (rest: string, after: RegExp) => after.test(rest);

/**
 * Whether `uri` is on `origin`, compared as text: the URI must begin with the origin exactly
 * as this service spells it, followed by its end, a path, a query or a fragment. Comparing
 * parsed URLs would let `http://0x7f000001/` or `http://%31%32%37.0.0.1/` stand for
 * `http://127.0.0.1`, and `https://user@host/` for `https://host`.
 */
function isOnOrigin(uri: string, origin: string): boolean {
  if (!uri.startsWith(origin)) return false;
  if (!endsOrGoesOn(uri.slice(origin.length), /^(?:$|[/?#])/)) return false;
  try {
    const url = new URL(uri);
    return url.origin === origin && url.username === '' && url.password === '';
  } catch {
    return false;
  }
}

/** The URI a flow offers for its messages. */
export function offeredUri(purpose: SignInPurpose, site: SiweSite): string {
  return purpose.uriPath === null ? site.uri : `${site.origin}${purpose.uriPath}`;
}

/**
 * The strict EIP-4361 checks of decisions.md "Security baseline", shared by every sign-in flow,
 * in this order: domain byte for byte, scheme, URI on this origin, an allowed Chain ID, Issued At not
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

/**
 * The flow's own checks, after checkSiweFields: its statement, and its URI path, so that a
 * message signed for one flow (which the wallet owner read as that flow's) opens no other.
 */
export function checkSignInPurpose(fields: SiweFields, purpose: SignInPurpose, site: SiweSite): void {
  if (fields.statement === undefined) {
    if (purpose.statementRequired) refuse(`The message must have the statement "${purpose.statement}" (from ${purpose.nonceRoute}).`);
  } else if (fields.statement !== purpose.statement) {
    refuse(`The message's statement is not this sign-in's; use the statement "${purpose.statement}" from ${purpose.nonceRoute}.`);
  }
  if (purpose.uriPath !== null) {
    const base = `${site.origin}${purpose.uriPath}`;
    if (!fields.uri.startsWith(base) || !endsOrGoesOn(fields.uri.slice(base.length), /^(?:$|[/?#])/)) {
      refuse(`The message's URI must be ${base} or lie under it.`);
    }
  }
}
