import { StringDecoder } from 'node:string_decoder';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { AppError } from '../../errors.js';
import { PackedAddresses } from './packed-addresses.js';

/**
 * The addresses of an asynchronous batch's body, read as it arrives: text in slices of at most
 * `sliceChars`, the event loop yielded to after each, so that no body, however large or however
 * delivered (one piece or many), holds the loop for longer than one slice takes. Each address is
 * checked as soon as it is complete and the first bad one ends the read (the rest of the body is
 * never read): a CSV body names its line, a JSON body the address's index. Kept as 20 bytes an
 * address (PackedAddresses), never as the body's text or an array of strings.
 */
export interface AddressReadLimits {
  /** Most addresses of one batch (BATCH_MAX_ADDRESSES). */
  max: number;
  /** Most bytes of the body (BATCH_BODY_LIMIT_BYTES). */
  bodyLimitBytes: number;
  /** Addresses the caller may still queue today; one more is refused at once with `refusal(count)`. None: no quota (the operator). */
  quota?: { allowed: number; refusal: (count: number) => AppError };
}

export type BodyFormat = 'json' | 'csv';

// 16 KiB of text: about 370 addresses, a fraction of a millisecond of checking (a few ms before the code is optimised).
export const sliceChars = 16_384;
// A CSV line longer than this is no address (quoted, padded): refused without holding it whole.
const longestCsvLine = 256;
// An address is 42 characters; a JSON string past this length is refused without holding it whole.
const longestJsonString = 64;

const addressPattern = /^0[xX][0-9a-fA-F]{40}$/;
export const isAddress = (text: string): boolean => addressPattern.test(text);

export async function readAddresses(body: AsyncIterable<Buffer | string> | Iterable<Buffer | string>, format: BodyFormat, limits: AddressReadLimits): Promise<PackedAddresses> {
  const packed = new PackedAddresses(limits.max);
  const parser = format === 'csv' ? csvParser(packed, limits) : jsonParser(packed, limits);
  const decoder = new StringDecoder('utf8');
  let bytes = 0;
  for await (const chunk of body) {
    bytes += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length;
    if (bytes > limits.bodyLimitBytes) {
      throw new AppError('payload_too_large', `The batch body is larger than BATCH_BODY_LIMIT_BYTES (${limits.bodyLimitBytes} bytes).`);
    }
    const text = typeof chunk === 'string' ? chunk : decoder.write(chunk);
    for (let start = 0; start < text.length; start += sliceChars) {
      parser.feed(text.slice(start, start + sliceChars));
      await yieldToEventLoop();
    }
  }
  parser.feed(decoder.end());
  parser.end();
  return packed;
}

function hasControlCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) < 0x20) return true;
  return false;
}

interface Parser {
  feed(text: string): void;
  end(): void;
}

function admit(packed: PackedAddresses, limits: AddressReadLimits, address: string, tooMany: () => AppError): void {
  if (packed.count === limits.max) throw tooMany();
  if (limits.quota && packed.count === limits.quota.allowed) throw limits.quota.refusal(packed.count + 1);
  packed.push(address);
}

/**
 * One address per line, an optional first line `address` (a header), blank lines ignored, CR LF
 * or LF, a line may be quoted ("0x…") as spreadsheet exports do. Lines are numbered from 1,
 * counting the header.
 */
function csvParser(packed: PackedAddresses, limits: AddressReadLimits): Parser {
  let carried = '';
  let lineNo = 0;
  const tooMany = () => new AppError('invalid_request', `The CSV body lists more than ${limits.max} addresses.`);
  const notAddress = (n: number) => new AppError('invalid_address', `Line ${n} of the CSV body is not an address (0x followed by 40 hexadecimal digits).`);
  const line = (raw: string) => {
    lineNo++;
    let text = raw.trim();
    if (text.startsWith('"') && text.endsWith('"') && text.length >= 2) text = text.slice(1, -1).trim();
    if (text === '') return;
    if (lineNo === 1 && text.toLowerCase() === 'address') return;
    if (!isAddress(text)) throw notAddress(lineNo);
    admit(packed, limits, text, tooMany);
  };
  return {
    feed(text) {
      let start = 0;
      for (let end = text.indexOf('\n'); end !== -1; end = text.indexOf('\n', start)) {
        line(carried + text.slice(start, end));
        carried = '';
        start = end + 1;
      }
      carried += text.slice(start);
      if (carried.length > longestCsvLine) {
        carried = carried.trimStart();
        if (carried.length > longestCsvLine) throw notAddress(lineNo + 1);
      }
    },
    end() {
      line(carried);
      carried = '';
      if (packed.count === 0) throw new AppError('invalid_request', 'The CSV body lists no address.');
    },
  };
}

type JsonState = 'start' | 'key' | 'key-or-close' | 'colon' | 'array' | 'item-or-close' | 'item' | 'comma-or-close' | 'member-end' | 'end';

/**
 * `{"addresses":[…]}` and nothing else, as the route's schema says (no other member, addresses
 * strings), tokenised as it arrives. Strings may hold JSON escapes; one longer than any address is
 * refused once it passes that length.
 */
function jsonParser(packed: PackedAddresses, limits: AddressReadLimits): Parser {
  let state: JsonState = 'start';
  // The string being read (a member name or an address), and where an escape stands in it.
  let inString = false;
  let escape = '';
  let text = '';
  let member = '';
  let sawAddresses = false;
  const invalidJson = () => new AppError('invalid_json', 'The request body is not valid JSON.');
  const tooMany = () => new AppError('invalid_request', `addresses lists more than ${limits.max} addresses; at most ${limits.max} are accepted.`);
  const notAddress = () => new AppError('invalid_address', `addresses[${packed.count}] must be 0x followed by 40 hexadecimal digits.`);

  const stringDone = () => {
    if (state === 'key' || state === 'key-or-close') {
      member = text;
      if (member !== 'addresses') throw new AppError('invalid_request', `The body has an unknown field "${member}".`);
      if (sawAddresses) throw new AppError('invalid_request', 'The body lists "addresses" twice.');
      sawAddresses = true;
      state = 'colon';
    } else {
      if (!isAddress(text)) throw notAddress();
      admit(packed, limits, text, tooMany);
      state = 'comma-or-close';
    }
    text = '';
  };

  // One character of a string (or '': check the length of what was added).
  const stringChar = (c: string): void => {
    if (c === '') {
      // Only the length check below (the plain run was added already).
    } else if (escape !== '') {
      escape += c;
      if (escape.length === 2 && escape !== '\\u') {
        const simple: Record<string, string> = { '\\"': '"', '\\\\': '\\', '\\/': '/', '\\b': '\b', '\\f': '\f', '\\n': '\n', '\\r': '\r', '\\t': '\t' };
        const value = simple[escape];
        if (value === undefined) throw invalidJson();
        text += value;
        escape = '';
      } else if (escape.length === 6) {
        if (!/^\\u[0-9a-fA-F]{4}$/.test(escape)) throw invalidJson();
        text += String.fromCharCode(parseInt(escape.slice(2), 16));
        escape = '';
      }
    } else if (c === '\\') {
      escape = c;
    } else if (c === '"') {
      inString = false;
      stringDone();
      return;
    } else if (c < ' ') {
      throw invalidJson();
    } else {
      text += c;
    }
    if (text.length > longestJsonString) {
      if (state === 'item' || state === 'item-or-close') throw notAddress();
      throw new AppError('invalid_request', 'The body has an unknown field.');
    }
  };

  const structural = (c: string): void => {
    if (c === ' ' || c === '\n' || c === '\r' || c === '\t') return;
    switch (state) {
      case 'start':
        if (c !== '{') throw c === '[' || c === '"' ? new AppError('invalid_request', 'The body must be a JSON object {"addresses":[…]}.') : invalidJson();
        state = 'key-or-close';
        return;
      case 'key-or-close':
      case 'key':
        if (c === '"') {
          inString = true;
          return;
        }
        if (c === '}' && state === 'key-or-close') {
          state = 'end';
          return;
        }
        throw invalidJson();
      case 'colon':
        if (c !== ':') throw invalidJson();
        state = 'array';
        return;
      case 'array':
        if (c !== '[') throw new AppError('invalid_request', 'The body field "addresses" must be an array of addresses.');
        state = 'item-or-close';
        return;
      case 'item-or-close':
      case 'item':
        if (c === '"') {
          inString = true;
          return;
        }
        if (c === ']' && state === 'item-or-close') {
          state = 'member-end';
          return;
        }
        // A number, object, literal or array where an address belongs.
        if (/[-0-9tfn[{]/.test(c)) throw notAddress();
        throw invalidJson();
      case 'comma-or-close':
        if (c === ',') state = 'item';
        else if (c === ']') state = 'member-end';
        else throw invalidJson();
        return;
      case 'member-end':
        if (c === ',') state = 'key';
        else if (c === '}') state = 'end';
        else throw invalidJson();
        return;
      case 'end':
        throw invalidJson();
    }
  };

  return {
    feed(chunk) {
      for (let i = 0; i < chunk.length; i++) {
        if (inString && escape === '') {
          // The plain run of a string at once, up to its closing quote or an escape.
          let end = chunk.indexOf('"', i);
          const backslash = chunk.indexOf('\\', i);
          if (end === -1 || (backslash !== -1 && backslash < end)) end = backslash === -1 ? chunk.length : backslash;
          if (end > i) {
            const run = chunk.slice(i, end);
            if (hasControlCharacter(run)) throw invalidJson();
            text += run;
            if (text.length > longestJsonString) stringChar('');
            i = end;
            if (i === chunk.length) break;
          }
        }
        const c = chunk[i]!;
        if (inString) stringChar(c);
        else structural(c);
      }
    },
    end() {
      if (state !== 'end' || inString) throw state === 'start' ? new AppError('invalid_json', 'The request body is empty but its content type is JSON.') : invalidJson();
      if (!sawAddresses) throw new AppError('invalid_request', 'The body field "addresses" is required.');
      if (packed.count === 0) throw new AppError('invalid_request', 'addresses must list at least one address.');
    },
  };
}
