import { type DestinationStream, pino, type Logger } from 'pino';

// Query parameters whose values must never reach a log line (grant export credentials).
const secretParameters = new Set(['_secret', '_key']);

function decodedName(raw: string): string {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' ')).toLowerCase();
  } catch {
    return raw.toLowerCase();
  }
}

/** The request URL as logged: export credentials in the query string are replaced by `[redacted]`. */
export function redactUrl(url: string): string {
  const queryAt = url.indexOf('?');
  if (queryAt < 0) return url;
  const hashAt = url.indexOf('#', queryAt);
  const query = url.slice(queryAt + 1, hashAt < 0 ? undefined : hashAt);
  const redacted = query
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=');
      const name = equals < 0 ? pair : pair.slice(0, equals);
      // Names are compared decoded, as the query parser will read them (`%5Fsecret` is `_secret`).
      return secretParameters.has(decodedName(name)) ? `${name}=[redacted]` : pair;
    })
    .join('&');
  return `${url.slice(0, queryAt + 1)}${redacted}${hashAt < 0 ? '' : url.slice(hashAt)}`;
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
    },
    },
    destination,
  );
}
