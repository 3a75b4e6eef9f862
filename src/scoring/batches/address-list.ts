import { AppError } from '../../errors.js';

const addressPattern = /^0[xX][0-9a-fA-F]{40}$/;

/**
 * The addresses of a JSON body, lower-cased, or 400 `invalid_address` naming the first bad index
 * (0-based, as in the submitted array). Nothing is kept but the resulting strings.
 */
export function addressesFromJson(addresses: readonly unknown[], max: number): string[] {
  if (addresses.length === 0) throw new AppError('invalid_request', 'addresses must list at least one address.');
  if (addresses.length > max) throw new AppError('invalid_request', `addresses lists ${addresses.length} addresses; at most ${max} are accepted.`);
  const out = new Array<string>(addresses.length);
  for (let i = 0; i < addresses.length; i++) {
    const value = addresses[i];
    if (typeof value !== 'string' || !addressPattern.test(value)) {
      throw new AppError('invalid_address', `addresses[${i}] must be 0x followed by 40 hexadecimal digits.`);
    }
    out[i] = value.toLowerCase();
  }
  return out;
}

/**
 * The addresses of a `text/csv` body: one per line, an optional first line `address` (a header),
 * blank lines ignored, CR LF or LF. A line may be quoted ("0x…") as spreadsheet exports do. A bad
 * line is 400 `invalid_address` naming its line number (1-based, counting the header).
 */
export function addressesFromCsv(text: string, max: number): string[] {
  const out: string[] = [];
  let lineNo = 0;
  let start = 0;
  while (start <= text.length) {
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length;
    lineNo++;
    let line = text.slice(start, end).trim();
    start = end + 1;
    if (line.startsWith('"') && line.endsWith('"') && line.length >= 2) line = line.slice(1, -1).trim();
    if (line === '') continue;
    if (lineNo === 1 && line.toLowerCase() === 'address') continue;
    if (!addressPattern.test(line)) {
      throw new AppError('invalid_address', `Line ${lineNo} of the CSV body is not an address (0x followed by 40 hexadecimal digits).`);
    }
    if (out.length === max) throw new AppError('invalid_request', `The CSV body lists more than ${max} addresses.`);
    out.push(line.toLowerCase());
  }
  if (out.length === 0) throw new AppError('invalid_request', 'The CSV body lists no address.');
  return out;
}
