/**
 * The one outbound call of the Models API: `POST <model URL>` with `{"address":"0x…"}`, bounded like a webhook
 * delivery (webhooks/delivery.ts): one deadline covers connect, request, response headers and the whole body, at
 * most `maxResponseBytes` of the body are read (a longer one is a failure, not truncated), redirects are never
 * followed, nothing is decompressed. Model URLs are operator configuration, so they are called as given (no target
 * guard); their answers are not trusted: this returns the parsed JSON or a short fixed reason, never throws for
 * anything the model service does, and never puts the URL or the body into the reason.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
/** Read of a model service's answer, at most (a score and a few fields fit many times over). */
const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024;

/** A model answer is a few fields; the webhook bound on receiver bodies is ample. */
export const MAX_MODEL_RESPONSE_BYTES = DEFAULT_MAX_RESPONSE_BYTES;

export interface ModelCallOptions {
  timeoutMs: number;
  maxResponseBytes?: number;
}

export type ModelCallOutcome = { ok: true; body: unknown } | { ok: false; reason: string };

class ModelCallFailure extends Error {}

function networkReason(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (code === 'ECONNRESET' || code === 'EPIPE') return 'connection reset';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'host not resolvable';
  if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH') return 'host unreachable';
  return 'network error';
}

/** The body as text, or a failure once it passes `limit` bytes. */
function readBounded(response: IncomingMessage, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let seen = 0;
    response.on('data', (chunk: Buffer) => {
      seen += chunk.length;
      if (seen > limit) {
        response.destroy();
        reject(new ModelCallFailure(`answer larger than ${limit} bytes`));
        return;
      }
      chunks.push(chunk);
    });
    response.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    response.once('error', () => reject(new ModelCallFailure('connection reset')));
    response.once('close', () => {
      if (!response.complete) reject(new ModelCallFailure('answer cut short'));
    });
  });
}

export async function callModelService(url: string, address: string, options: ModelCallOptions): Promise<ModelCallOutcome> {
  const limit = options.maxResponseBytes ?? MAX_MODEL_RESPONSE_BYTES;
  const target = new URL(url);
  const body = JSON.stringify({ address });
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(new ModelCallFailure(`no answer within ${options.timeoutMs} ms`));
    }, options.timeoutMs);
  });
  deadline.catch(() => undefined);
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  try {
    const text = await Promise.race([
      new Promise<string>((resolve, reject) => {
        const req = send(
          target,
          {
            method: 'POST',
            // One connection per call: nothing of a misbehaving model service lingers in a pool.
            agent: false,
            signal: controller.signal,
            headers: {
              'content-type': 'application/json',
              'content-length': Buffer.byteLength(body),
              accept: 'application/json',
              'accept-encoding': 'identity',
              'user-agent': 'Stampgate-Models/1',
            },
          },
          (response) => {
            response.on('error', () => undefined);
            const status = response.statusCode ?? 0;
            if (status < 200 || status >= 300) {
              response.destroy();
              reject(new ModelCallFailure(status >= 300 && status < 400 ? `redirect (HTTP ${status}) not followed` : `HTTP ${status}`));
              return;
            }
            const declared = Number(response.headers['content-length']);
            if (Number.isFinite(declared) && declared > limit) {
              response.destroy();
              reject(new ModelCallFailure(`answer larger than ${limit} bytes`));
              return;
            }
            readBounded(response, limit).then(resolve, reject);
          },
        );
        req.on('error', (error) => reject(controller.signal.aborted ? new ModelCallFailure(`no answer within ${options.timeoutMs} ms`) : error));
        req.end(body);
      }),
      deadline,
    ]);
    try {
      return { ok: true, body: JSON.parse(text) as unknown };
    } catch {
      return { ok: false, reason: 'answer is not JSON' };
    }
  } catch (error) {
    if (error instanceof ModelCallFailure) return { ok: false, reason: error.message };
    return { ok: false, reason: networkReason(error) };
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
}
