import { type DestinationStream, pino, type Logger } from 'pino';

// Query parameters whose values must never reach a log line (grant export credentials).
const secretParameters = /([?&](?:_secret|_key)=)[^&#]*/gi;

/** The request URL as logged: export credentials in the query string are replaced by `[redacted]`. */
export function redactUrl(url: string): string {
  return url.replace(secretParameters, '$1[redacted]');
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
