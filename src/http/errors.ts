import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type, type TSchema } from '@sinclair/typebox';
import { isDatabaseUnavailable, type DatabaseAvailability } from '../db/availability.js';
import { trackRouteMethods } from './method-not-allowed.js';
import { describePattern } from './pattern-words.js';
import { AppError, databaseUnavailableError, defaultRetryAfterSeconds, type ErrorCode } from '../errors.js';

export const ErrorBody = Type.Object(
  {
    detail: Type.String({ description: 'A sentence for a person.' }),
    code: Type.String({ description: 'A snake_case machine-readable code.' }),
    address: Type.Optional(Type.String({ description: 'The address concerned, on errors about one address (score_not_found).' })),
  },
  { $id: 'ErrorBody', title: 'Error' },
);

/** Response schemas for the given error statuses, for a route's `schema.response`. */
export function errorResponses(...statuses: number[]): Record<number, TSchema> {
  const out: Record<number, TSchema> = {};
  for (const status of statuses) out[status] = Type.Ref(ErrorBody);
  return out;
}

// Which bad field gets which specific code; any other schema violation is `invalid_request`.
const fieldCodes: Record<string, ErrorCode> = {
  address: 'invalid_address',
  limit: 'invalid_limit',
  offset: 'invalid_offset',
  last_score_timestamp_gt: 'invalid_timestamp',
  last_score_timestamp_gte: 'invalid_timestamp',
  last_score_timestamp__gt: 'invalid_timestamp',
  last_score_timestamp__gte: 'invalid_timestamp',
  created_at: 'invalid_timestamp',
};

function describeValidationError(error: FastifyError): AppError {
  const first = error.validation?.[0];
  const params = (first?.params ?? {}) as Record<string, unknown>;
  const field =
    (typeof params.missingProperty === 'string' && params.missingProperty) ||
    (typeof params.additionalProperty === 'string' && params.additionalProperty) ||
    (first?.instancePath ?? '').split('/').filter(Boolean)[0] ||
    '';
  const where = error.validationContext ?? 'request';
  const code = fieldCodes[field] ?? 'invalid_request';
  if (code === 'invalid_address') {
    return new AppError(code, `"${field}" must be 0x followed by 40 hexadecimal digits.`);
  }
  if (code === 'invalid_limit') return new AppError(code, 'limit must be an integer from 0 to 1000.');
  if (code === 'invalid_offset') return new AppError(code, 'offset must be a non-negative integer.');
  if (code === 'invalid_timestamp') {
    return new AppError(code, `${field} must be an ISO 8601 date-time.`);
  }
  const message = first?.message ?? 'is invalid';
  if (first?.keyword === 'required') {
    return new AppError(code, `The ${where} is missing the required field "${field}".`);
  }
  if (first?.keyword === 'additionalProperties') {
    return new AppError(code, `The ${where} has an unknown field "${field}".`);
  }
  if (first?.keyword === 'pattern') {
    const words = describePattern(String(params.pattern));
    return new AppError(code, field ? `The ${where} field "${field}" ${words}.` : `The ${where} ${words}.`);
  }
  return new AppError(code, field ? `The ${where} field "${field}" ${message}.` : `The ${where} ${message}.`);
}

// Errors Fastify itself raises for transport-level problems.
const fastifyCodes: Record<string, [ErrorCode, string]> = {
  FST_ERR_CTP_BODY_TOO_LARGE: ['payload_too_large', 'The request body is larger than this server accepts.'],
  FST_ERR_CTP_INVALID_MEDIA_TYPE: ['unsupported_media_type', 'Send the request body as application/json.'],
  FST_ERR_CTP_EMPTY_JSON_BODY: ['invalid_json', 'The request body is empty but its content type is JSON.'],
  FST_ERR_CTP_INVALID_JSON_BODY: ['invalid_json', 'The request body is not valid JSON.'],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: ['invalid_request', 'The Content-Length header does not match the body.'],
  FST_ERR_BAD_URL: ['invalid_request', 'The URL path is not valid percent-encoded UTF-8.'],
  FST_ERR_MAX_PARAM_LENGTH: ['uri_too_long', 'A path segment is longer than any this server accepts.'],
};

export function toAppError(error: unknown, retryAfterSeconds = defaultRetryAfterSeconds): AppError | null {
  if (error instanceof AppError) return error;
  // A lost, refused or timed-out database connection, on either dialect: the request could not be
  // served now but will be once the database answers.
  if (isDatabaseUnavailable(error)) return databaseUnavailableError(retryAfterSeconds);
  const fastifyError = error as FastifyError;
  if (fastifyError?.validation) return describeValidationError(fastifyError);
  const known = fastifyError?.code ? fastifyCodes[fastifyError.code] : undefined;
  if (known) return new AppError(known[0], known[1]);
  if (error instanceof SyntaxError && fastifyError.statusCode === 400) {
    return new AppError('invalid_json', 'The request body is not valid JSON.');
  }
  const status = fastifyError?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    if (status === 413) return new AppError('payload_too_large', 'The request body is larger than this server accepts.');
    if (status === 415) return new AppError('unsupported_media_type', 'Send the request body as application/json.');
    return new AppError('invalid_request', 'The request could not be understood.');
  }
  return null;
}

function sendError(appError: AppError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  request.log.info({ code: appError.code }, appError.message);
  return reply.code(appError.status).headers(appError.headers).send({ detail: appError.message, code: appError.code, ...appError.fields });
}

/**
 * Fastify's `frameworkErrors` option: errors raised while routing (a path that does not
 * decode, an overlong path parameter) before any handler or hook, with the standard body.
 */
export function sendFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  void sendError(toAppError(error) ?? new AppError('invalid_request', 'The request could not be understood.'), request, reply);
}

/**
 * Fastify's `clientErrorHandler` option: requests Node's HTTP parser refuses, answered on the
 * raw socket (there is no request object yet) with the standard body.
 */
export function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const appError =
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? new AppError('request_timeout', 'The request was not received in time.')
      : error.code === 'HPE_HEADER_OVERFLOW'
        ? new AppError('headers_too_large', 'The request headers are larger than this server accepts.')
        : new AppError('invalid_request', 'The request is not valid HTTP.');
  const body = JSON.stringify({ detail: appError.message, code: appError.code });
  if (socket.writable) {
    // No request object exists, so no request id either: a fresh one, for the client to quote.
    socket.write(
      `HTTP/1.1 ${appError.status} ${STATUS_CODES[appError.status]}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `Content-Type: application/json; charset=utf-8\r\nX-Request-Id: ${randomUUID()}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}

export interface ErrorHandlingOptions {
  /** `Retry-After` of 503 answers (RETRY_AFTER_SECONDS). */
  retryAfterSeconds?: number;
  /** Told about database errors, so that an outage is logged once rather than per request. */
  availability?: DatabaseAvailability;
}

export function registerErrorHandling(app: FastifyInstance, options: ErrorHandlingOptions = {}): void {
  app.addSchema(ErrorBody);

  app.setErrorHandler((error, request, reply) => {
    options.availability?.observe(error);
    const appError = toAppError(error, options.retryAfterSeconds);
    if (appError) return sendError(appError, request, reply);
    request.log.error({ err: error }, 'unexpected error');
    return reply
      .code(500)
      .send({ detail: 'Something went wrong on our side; the error has been logged.', code: 'internal_error' });
  });

  const methodsOf = trackRouteMethods(app);
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0]!;
    const allowed = methodsOf(path);
    if (allowed.length > 0) {
      return reply
        .code(405)
        .header('allow', allowed.join(', '))
        .send({ detail: `${path} does not accept ${request.method}; it accepts ${allowed.join(', ')}.`, code: 'method_not_allowed' });
    }
    return reply.code(404).send({ detail: `There is no ${request.method} ${path} here.`, code: 'not_found' });
  });
}
