import { type DestinationStream, pino, type Logger } from 'pino';

/**
 * Query parameters whose values never reach a log line: grant export credentials, OAuth
 * authorization codes and state, tokens, signatures and keys. Compared lower-case, decoded.
 */
const SECRET_PARAMETERS = new Set([
  '_key',
  '_secret',
  'code',
  'state',
  'token',
  'access_token',
  'refresh_token',
  'id_token',
  'signature',
  'sig',
  'api_key',
  'apikey',
  'x-api-key',
  'key',
  'secret',
  'password',
  'session',
  'stampgate_session',
]);

/** Headers whose values never reach a log line. */
export const SECRET_HEADERS = ['authorization', 'proxy-authorization', 'cookie', 'set-cookie', 'x-api-key', 'x-csrf-token'];

const REDACTED = '[redacted]';

/**
 * A parameter name as the query parser reads it (`+` is a space, percent-escapes decoded; a
 * double-encoded name is decoded again, in case something downstream decodes twice), reduced to
 * the letters that name it: `%5Fsecret`, `_SECRET`, `_secret[]` and ` _secret` are all `_secret`.
 */
function parameterName(raw: string): string {
  let name = raw.replace(/\+/g, ' ');
  for (let i = 0; i < 3 && name.includes('%'); i++) {
    try {
      name = decodeURIComponent(name);
    } catch {
      break;
    }
  }
  return name
    .toLowerCase()
    .replace(/\[[^\]]*\]$/, '')
    .replace(/^[^a-z0-9_-]+|[^a-z0-9_-]+$/g, '');
}

// Where a parameter may start: the router (find-my-way) ends the path at the first `?` or `#`
// and hands the rest, `#` included, to the query parser, which splits pairs on `&` only; some
// proxies and frameworks also split on `;`. Every one of them starts a candidate pair here.
const PAIR_START = new Set(['?', '#', '&', ';']);

/**
 * The URL as logged: the value of every secret parameter replaced by `[redacted]`. It reads
 * every spelling the router and its query parser would read as that parameter (a `#` before
 * the `?`, percent-encoded or upper-case names, repeated parameters, `;` separators), and more:
 * a secret's value is cut up to the next `&`, where the query parser ends it, so a `;`, `#` or
 * `?` inside the value cannot leave part of it behind.
 */
export function redactUrl(url: string): string {
  let i = 0;
  const n = url.length;
  // The path up to the first separator is kept as it is.
  while (i < n && !PAIR_START.has(url[i]!)) i++;
  let out = url.slice(0, i);
  while (i < n) {
    out += url[i];
    i++;
    let end = i;
    while (end < n && !PAIR_START.has(url[end]!)) end++;
    const pair = url.slice(i, end);
    const equals = pair.indexOf('=');
    const name = equals < 0 ? pair : pair.slice(0, equals);
    if (name !== '' && SECRET_PARAMETERS.has(parameterName(name))) {
      const valueEnd = url.indexOf('&', i);
      out += `${name}=${REDACTED}`;
      i = valueEnd < 0 ? n : valueEnd;
    } else {
      out += pair;
      i = end;
    }
  }
  return out;
}

/** Headers as logged: credentials and cookies replaced by `[redacted]`. */
export function redactHeaders(headers: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(headers)) {
    out[name] = SECRET_HEADERS.includes(name.toLowerCase()) ? REDACTED : typeof value === 'string' && /url|referer|location/i.test(name) ? redactUrl(value) : value;
  }
  return out;
}

/**
 * The process logger. Its `req` serializer takes precedence over Fastify's default one, which
 * would log the full URL, `_secret` included.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
    level,
    serializers: {
      req: (request: { method?: string; url?: string; host?: string; ip?: string; socket?: { remotePort?: number } }) => ({
        method: request.method,
        url: redactUrl(request.url ?? ''),
        host: request.host,
        remoteAddress: request.ip,
        remotePort: request.socket?.remotePort,
      }),
      // Whoever logs a URL or headers under these names gets them redacted too.
      url: (url: unknown) => (typeof url === 'string' ? redactUrl(url) : url),
      headers: (headers: unknown) => (typeof headers === 'object' && headers !== null ? redactHeaders(headers as Record<string, unknown>) : headers),
    },
    },
    destination,
  );
}
