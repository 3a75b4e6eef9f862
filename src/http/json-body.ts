import type { FastifyInstance } from 'fastify';
import { AppError } from '../errors.js';

/**
 * How deeply the JSON text nests arrays and objects, counting only up to `limit + 1`: strings
 * are skipped whole (with indexOf), so the scan is a few milliseconds for a megabyte and stops
 * at once for a hostile body.
 */
export function nestingDepthExceeds(text: string, limit: number): boolean {
  let depth = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // A string: jump to its closing quote (one not escaped by an odd run of backslashes).
      let end = text.indexOf('"', i + 1);
      while (end !== -1) {
        let backslashes = 0;
        for (let j = end - 1; text.charCodeAt(j) === 0x5c; j--) backslashes++;
        if (backslashes % 2 === 0) break;
        end = text.indexOf('"', end + 1);
      }
      if (end === -1) return false; // unterminated: JSON.parse refuses it
      i = end;
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > limit) return true;
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
    }
  }
  return false;
}

/**
 * Bodies up to this size are not scanned: whatever their nesting, JSON.parse takes about a
 * millisecond for them, while the scan would add some 15 % to the parse of every ordinary
 * submission (a 20-stamp body is about 40 KB).
 */
export const DEPTH_SCAN_MIN_BYTES = 64 * 1024;

/**
 * Fastify's own JSON body parser (prototype-poisoning checks included) behind a nesting limit:
 * parsing a body of a megabyte nested 100,000 levels deep costs JSON.parse 20 to 40 ms of CPU
 * and builds as many objects, while no request of this API nests more than a few levels.
 */
export function registerJsonBodyParser(app: FastifyInstance, maxDepth: number): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body as string;
    if (text.length > DEPTH_SCAN_MIN_BYTES && nestingDepthExceeds(text, maxDepth)) {
      done(new AppError('invalid_request', `The request body nests arrays and objects more than ${maxDepth} levels deep.`), undefined);
      return;
    }
    parse(request, text, done);
  });
}
