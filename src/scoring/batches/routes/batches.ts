import { Readable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest, preParsingHookHandler } from 'fastify';
import type { Config } from '../../../config/index.js';
import type { AccountSlots } from '../account-slots.js';
import type { BatchService } from '../batches.service.js';
import { AppError } from '../../../errors.js';
import { errorResponses } from '../../../http/errors.js';
import { streamedBodyValidator } from '../../../http/request-validators.js';
import type { RateBudget } from '../../../http/rate-limit.js';
import { Integer, ScorerIdSchema } from '../../../http/schemas.js';
import { typed } from '../../../http/typebox.js';
import { requirePermission } from '../../accounts/api-key-auth.js';
import { AddressListSchema, BatchIdSchema, BatchViewSchema, CsvBodySchema } from '../batch.schema.js';
import { V2ScoreListSchema } from '../v2-score.js';

/**
 * Batch scoring routes, in a scope of their own inside the scoring plugin (API key, key budget).
 * The asynchronous batch route has a scope of its own again: its JSON and CSV bodies are handed
 * on as streams, read and checked by the service as they arrive (never buffered whole).
 * Every batch route needs `read_scores`: a batch is v2 scoring, which v2.md puts under it.
 */
/** What the batch routes use: the batch service, its size settings and the key budget the addresses are charged to. */
export interface BatchRouteDeps {
  service: BatchService;
  config: Pick<
    Config,
    'batchBodyLimitBytes' | 'batchMaxAddresses' | 'batchResultsWaitMs' | 'batchSyncMaxAddresses' | 'batchResultStreamsPerAccount' | 'batchUploadsPerAccount'
  >;
  /** Open result streams per account (BATCH_RESULT_STREAMS_PER_ACCOUNT). */
  resultStreams: AccountSlots;
  /** Batch uploads under way per account (BATCH_UPLOADS_PER_ACCOUNT). */
  uploads: AccountSlots;
  budget: RateBudget;
}

/** Holds `release` until the response is over (sent, or the client went away), whatever happens meanwhile. */
function releaseWhenAnswered(reply: FastifyReply, release: () => void): void {
  reply.raw.once('finish', release);
  reply.raw.once('close', release);
}

export async function batchRoutes(instance: FastifyInstance, deps: BatchRouteDeps): Promise<void> {
  const { config, service, budget } = deps;
  // Runs after the key budget's onRequest hook (added by the parent scope's onRoute), so a refused
  // request has still spent its unit, as everywhere else.
  const checkBeforeBody: preParsingHookHandler = async (request, reply, payload) => {
    const caller = requirePermission(request, 'read_scores');
    releaseWhenAnswered(reply, deps.uploads.take(caller.accountId));
    const scorerId = (request.params as { scorer_id?: string }).scorer_id ?? '';
    // A malformed id is refused by the schema right after; only a well-formed one is looked up.
    if (/^[0-9]{1,15}$/.test(scorerId)) await service.checkBeforeBody(caller, Number(scorerId));
    const declared = Number(request.headers['content-length']);
    if (declared > config.batchBodyLimitBytes) {
      throw new AppError('payload_too_large', `The batch body is larger than BATCH_BODY_LIMIT_BYTES (${config.batchBodyLimitBytes} bytes).`);
    }
    return payload;
  };
  instance.addHook('onRoute', (route) => {
    if ((route.config as { checkBeforeBody?: boolean } | undefined)?.checkBeforeBody) {
      const hooks = route.preParsing;
      route.preParsing = [...(Array.isArray(hooks) ? hooks : hooks ? [hooks] : []), checkBeforeBody];
    }
  });
  await instance.register(async (uploads) => {
    // The body reaches the handler as the request stream (the service reads and checks it as it
    // arrives); its byte limit is counted there and checked against Content-Length before.
    uploads.removeContentTypeParser('application/json');
    uploads.addContentTypeParser(['application/json', 'text/csv'], (_request, payload, done) => done(null, payload));
    typed(uploads).post(
      '/v2/scorers/:scorer_id/batches',
      {
        config: { checkBeforeBody: true },
        validatorCompiler: streamedBodyValidator(),
        schema: {
          tags: ['v2'],
          summary: 'Queue a batch of addresses for scoring',
          description:
            `Up to ${config.batchMaxAddresses} addresses as JSON \`{"addresses":[…]}\` or \`text/csv\` (one address per line, ` +
            'optional header `address`). Answers 202 with the batch and its `Location`; the batch is scored in the background, ' +
            "exactly once per address, and survives restarts. Needs `read_scores`. The scorer, the permission and the account's " +
            'daily batch quota (shared by its keys; by its tier, BATCH_DAILY_ADDRESSES) are checked before the body is read, and the body is checked as it ' +
            'arrives: the first invalid address is 400 `invalid_address` naming its index (CSV: its line), the address past the ' +
            'quota left today 429 `batch_quota_exceeded` with `Retry-After` to the next UTC day, each answered at once without ' +
            'reading the rest; nothing is queued or spent. At most BATCH_UPLOADS_PER_ACCOUNT ' +
            `(${config.batchUploadsPerAccount} here) uploads of one account are under way at once per server process; over it 429 \`too_many_batch_uploads\`.`,
          security: [{ apiKey: [] }],
          params: Type.Object({ scorer_id: ScorerIdSchema }),
          body: {
            content: {
              'application/json': { schema: AddressListSchema(config.batchMaxAddresses) },
              'text/csv': { schema: CsvBodySchema },
            },
          } as never,
          response: { 202: BatchViewSchema, ...errorResponses(400, 401, 403, 404, 413, 415, 429) },
        },
      },
      async (request, reply) => {
        const caller = requirePermission(request, 'read_scores');
        const format = /^text\/csv/i.test(request.headers['content-type'] ?? '') ? 'csv' : 'json';
        try {
          const batch = await service.create(caller, Number(request.params.scorer_id), { format, body: request.body as unknown as Readable });
          return reply.code(202).header('location', `/v2/batches/${batch.id}`).send(batch);
        } catch (error) {
          // Refused before the body ended: the connection is closed after the answer rather than
          // kept for the next request, so that the rest of the body is never read.
          if (!request.raw.complete) reply.header('connection', 'close');
          throw error;
        }
      },
    );
  });

  const app = typed(instance);

  app.get(
    '/v2/batches/:id',
    {
      schema: {
        tags: ['v2'],
        summary: 'A batch and its progress',
        description: 'Only the account whose key created the batch sees it (others get 404). Needs `read_scores`.',
        security: [{ apiKey: [] }],
        params: Type.Object({ id: BatchIdSchema }),
        response: { 200: BatchViewSchema, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => service.get(requirePermission(request, 'read_scores'), request.params.id),
  );

  app.delete(
    '/v2/batches/:id',
    {
      schema: {
        tags: ['v2'],
        summary: 'Cancel a batch',
        description:
          'Addresses not scored yet are not scored; those already scored keep their results. A batch that has ended is answered as it is. Needs `read_scores`.',
        security: [{ apiKey: [] }],
        params: Type.Object({ id: BatchIdSchema }),
        response: { 200: BatchViewSchema, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => service.cancel(requirePermission(request, 'read_scores'), request.params.id),
  );

  app.get(
    '/v2/batches/:id/results',
    {
      schema: {
        tags: ['v2'],
        summary: 'Stream the results of a batch',
        description:
          'NDJSON, one v2 score object per address in input order (default), or CSV `address,score,passing_score,threshold,error` ' +
          'with `Accept: text/csv`. A running batch is followed: rows are sent as addresses finish, and the stream ends when the ' +
          `batch ends, or when no address finished for BATCH_RESULTS_WAIT_MS (${config.batchResultsWaitMs} ms here); resume with ` +
          '`offset` = the number of result lines received (CSV header not counted). A failed address has `error` set and score "0.00000". Addresses of a cancelled ' +
          'batch that were not scored are left out. Needs `read_scores`. At most BATCH_RESULT_STREAMS_PER_ACCOUNT ' +
          `(${config.batchResultStreamsPerAccount} here) streams of one account are open at once per server process; over it 429 \`too_many_result_streams\`.`,
        security: [{ apiKey: [] }],
        params: Type.Object({ id: BatchIdSchema }),
        querystring: Type.Object({ offset: Type.Optional(Integer({ minimum: 0, maximum: 10_000_000, description: 'Result lines to skip (resume).' })) }),
        produces: ['application/x-ndjson', 'text/csv'],
        response: {
          200: {
            description: 'The result lines, streamed.',
            content: {
              // Typed as unknown for the handler: the body is a stream of these lines, not one string.
              'application/x-ndjson': { schema: Type.Unsafe<unknown>({ type: 'string', description: 'One JSON object a line.' }) },
              'text/csv': { schema: Type.Unsafe<unknown>({ type: 'string', description: 'A header line, then one row an address.' }) },
            },
          },
          ...errorResponses(400, 401, 403, 404, 429),
        },
      },
    },
    async (request, reply) => {
      const caller = requirePermission(request, 'read_scores');
      const format = wantsCsv(request) ? 'csv' : 'ndjson';
      // Held until the response closes (sent, or the client went away), whatever happens meanwhile.
      const release = deps.resultStreams.take(caller.accountId);
      const gone = new AbortController();
      reply.raw.once('close', () => {
        release();
        gone.abort();
      });
      let lines: AsyncIterable<string>;
      try {
        lines = await service.results(caller, request.params.id, format, request.query.offset ?? 0, gone.signal);
      } catch (error) {
        release();
        throw error;
      }
      return reply
        .type(format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8')
        .header('cache-control', 'no-store')
        .send(Readable.from(lines));
    },
  );

  app.post(
    '/v2/stamps/:scorer_id/scores',
    {
      schema: {
        tags: ['v2'],
        summary: 'Score up to a hundred addresses now',
        description:
          `1 to ${config.batchSyncMaxAddresses} addresses, each scored now from its stored stamps exactly as ` +
          '`GET /v2/stamps/{scorer_id}/score/{address}` does; `items` in input order, an address listed twice answered twice ' +
          'with the same object. Costs one rate-limit unit per address (refused with 429 and nothing scored when they do not ' +
          'all fit in the key\'s budget). An invalid address is 400 `invalid_address` naming its index; nothing is scored. Needs `read_scores`.',
        security: [{ apiKey: [] }],
        params: Type.Object({ scorer_id: ScorerIdSchema }),
        body: AddressListSchema(config.batchSyncMaxAddresses),
        response: { 200: V2ScoreListSchema, ...errorResponses(400, 401, 403, 404, 429) },
      },
      // The request's first unit was counted with every request; the other addresses here.
      preHandler: async (request, reply) => {
        requirePermission(request, 'read_scores');
        await budget.spend(request, reply, (request.body as { addresses: unknown[] }).addresses.length - 1);
      },
    },
    async (request) => {
      const caller = requirePermission(request, 'read_scores');
      return { items: await service.scoreMany(caller, Number(request.params.scorer_id), request.body.addresses) };
    },
  );
}

function wantsCsv(request: FastifyRequest): boolean {
  const accept = request.headers.accept ?? '';
  if (!/text\/csv/i.test(accept)) return false;
  // CSV when asked for before (or instead of) NDJSON/JSON.
  const csvAt = accept.search(/text\/csv/i);
  const jsonAt = accept.search(/application\/(x-)?n?d?json/i);
  return jsonAt === -1 || csvAt < jsonAt;
}
