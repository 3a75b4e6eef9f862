import { isAddress } from 'viem';
import { AppError } from '../../errors.js';

/**
 * Sign-In with Ethereum (EIP-4361) messages, read strictly: the whole text must follow the
 * grammar, line by line, with nothing before or after it. A lenient reader would let a
 * message show the wallet owner one thing and the service another.
 */

export interface SiweFields {
  scheme?: string;
  /** RFC 3986 authority (host and optional port) that asks for the sign-in. */
  domain: string;
  /** As written in the message (EIP-55 mixed case or all lower case). */
  address: string;
  statement?: string;
  uri: string;
  version: string;
  chainId: number;
  nonce: string;
  issuedAt: Date;
  expirationTime?: Date;
  notBefore?: Date;
  requestId?: string;
  resources?: string[];
}

const PREAMBLE = ' wants you to sign in with your Ethereum account:';

// The EIP's grammar puts an empty line on both sides of the optional statement, so a message
// without one has three line feeds after the address (viem writes that); some older libraries
// write two. Both are read: the form is unambiguous either way.
const MESSAGE = new RegExp(
  '^(?:(?<scheme>[a-zA-Z][a-zA-Z0-9+.-]*)://)?(?<domain>[^\\s/?#@]+)' +
    PREAMBLE +
    '\\n(?<address>[^\\n]*)\\n\\n' +
    '(?:(?<statement>[^\\n]+)\\n\\n|\\n)?' +
    'URI: (?<uri>[^\\n]+)\\n' +
    'Version: (?<version>[^\\n]+)\\n' +
    'Chain ID: (?<chainId>[^\\n]+)\\n' +
    'Nonce: (?<nonce>[^\\n]+)\\n' +
    'Issued At: (?<issuedAt>[^\\n]+)' +
    '(?:\\nExpiration Time: (?<expirationTime>[^\\n]+))?' +
    '(?:\\nNot Before: (?<notBefore>[^\\n]+))?' +
    '(?:\\nRequest ID: (?<requestId>[^\\n]*))?' +
    '(?:\\nResources:(?<resources>(?:\\n- [^\\n]+)*))?$',
);

const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/i;
const NONCE = /^[a-zA-Z0-9]{8,}$/;
const CHAIN_ID = /^[1-9][0-9]{0,14}$/;

function refuse(detail: string): never {
  throw new AppError('invalid_siwe_message', detail);
}

function dateField(value: string | undefined, label: string): Date | undefined {
  if (value === undefined) return undefined;
  const date = DATE_TIME.test(value) ? new Date(value) : new Date(Number.NaN);
  if (Number.isNaN(date.getTime())) refuse(`The message's "${label}" is not an RFC 3339 date-time.`);
  return date;
}

/** The fields of an EIP-4361 message; refuses (400 `invalid_siwe_message`) anything else. */
export function parseSiweMessageStrict(message: string): SiweFields {
  const groups = MESSAGE.exec(message)?.groups;
  if (!groups) {
    if (!message.includes(PREAMBLE)) refuse('The message is not a Sign-In with Ethereum (EIP-4361) message.');
    refuse(
      'The message does not follow the EIP-4361 format: the lines must be, in this order, the preamble, the address, ' +
        'an optional statement, URI, Version, Chain ID, Nonce, Issued At and the optional Expiration Time, Not Before, ' +
        'Request ID and Resources, separated by single line feeds and with nothing after them.',
    );
  }
  const g = groups as Record<string, string | undefined>;
  const address = g.address as string;
  if (!isAddress(address, { strict: false })) refuse('The message\'s address is not 0x followed by 40 hexadecimal digits.');
  if (!isAddress(address, { strict: true })) refuse('The message\'s address has mixed case that is not a valid EIP-55 checksum.');
  if (g.version !== '1') refuse('The message\'s Version must be 1.');
  if (!CHAIN_ID.test(g.chainId as string)) refuse('The message\'s Chain ID is not a positive integer.');
  if (!NONCE.test(g.nonce as string)) refuse('The message\'s Nonce must be at least 8 letters and digits.');
  const issuedAt = dateField(g.issuedAt, 'Issued At') as Date;
  return {
    ...(g.scheme !== undefined ? { scheme: g.scheme } : {}),
    domain: g.domain as string,
    address,
    ...(g.statement !== undefined ? { statement: g.statement } : {}),
    uri: g.uri as string,
    version: '1',
    chainId: Number(g.chainId),
    nonce: g.nonce as string,
    issuedAt,
    ...(g.expirationTime !== undefined ? { expirationTime: dateField(g.expirationTime, 'Expiration Time') } : {}),
    ...(g.notBefore !== undefined ? { notBefore: dateField(g.notBefore, 'Not Before') } : {}),
    ...(g.requestId !== undefined ? { requestId: g.requestId } : {}),
    ...(g.resources !== undefined ? { resources: g.resources.split('\n- ').slice(1) } : {}),
  };
}
