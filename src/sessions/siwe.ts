import { isAddress } from 'viem';
import { parseSiweMessage } from 'viem/siwe';
import { AppError } from '../errors.js';

/**
 * Sign-In with Ethereum (EIP-4361) messages, read strictly: the whole text must follow the
 * grammar, line by line, with nothing before or after it, and every date must be a real
 * calendar date. A lenient reader would let a message show the wallet owner one thing and the
 * service another. viem's parser (what wallets and dApps built on viem read) must read the
 * same fields, so that no message means one thing to them and another to us; it is not used
 * alone because it does not anchor the message's end and lets `new Date` roll impossible
 * dates over (`2030-02-30` becomes 2 March).
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

const DATE_TIME =
  /^(?<year>\d{4})-(?<month>\d{2})-(?<day>\d{2})T(?<hour>\d{2}):(?<minute>\d{2}):(?<second>\d{2})(?:\.\d+)?(?:Z|[+-](?<offsetHour>\d{2}):(?<offsetMinute>\d{2}))$/i;
const NONCE = /^[a-zA-Z0-9]{8,}$/;
const CHAIN_ID = /^[1-9][0-9]{0,14}$/;

function refuse(detail: string): never {
  throw new AppError('invalid_siwe_message', detail);
}

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/** RFC 3339 `date-time` whose fields are in range: 2030-02-30 and 24:00 are not dates. */
function isRealDateTime(value: string): boolean {
  const g = DATE_TIME.exec(value)?.groups;
  if (!g) return false;
  const [year, month, day, hour, minute, second] = [g.year, g.month, g.day, g.hour, g.minute, g.second].map(Number) as number[];
  if (month! < 1 || month! > 12 || day! < 1 || day! > daysInMonth(year!, month!)) return false;
  if (hour! > 23 || minute! > 59 || second! > 59) return false;
  if (g.offsetHour !== undefined && (Number(g.offsetHour) > 23 || Number(g.offsetMinute) > 59)) return false;
  return true;
}

function dateField(value: string | undefined, label: string): Date | undefined {
  if (value === undefined) return undefined;
  const date = isRealDateTime(value) ? new Date(value) : new Date(Number.NaN);
  if (Number.isNaN(date.getTime())) refuse(`The message's "${label}" is not an RFC 3339 date-time.`);
  return date;
}

const sameTime = (a: Date | undefined, b: Date | undefined) => a?.getTime() === b?.getTime();

/** Refuses a message that viem's parser reads differently from ours. */
function requireSameReading(message: string, fields: SiweFields): void {
  const theirs = parseSiweMessage(message);
  const agree =
    theirs.domain === fields.domain &&
    theirs.address === fields.address &&
    (theirs.statement ?? undefined) === fields.statement &&
    theirs.uri === fields.uri &&
    theirs.version === fields.version &&
    theirs.chainId === fields.chainId &&
    theirs.nonce === fields.nonce &&
    (theirs.scheme ?? undefined) === fields.scheme &&
    sameTime(theirs.issuedAt, fields.issuedAt) &&
    sameTime(theirs.expirationTime, fields.expirationTime) &&
    sameTime(theirs.notBefore, fields.notBefore) &&
    (theirs.requestId ?? undefined) === (fields.requestId || undefined) &&
    JSON.stringify(theirs.resources) === JSON.stringify(fields.resources);
  if (!agree) refuse('The message can be read in more than one way; write it as EIP-4361 lays it out.');
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
  const fields: SiweFields = {
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
  requireSameReading(message, fields);
  return fields;
}
