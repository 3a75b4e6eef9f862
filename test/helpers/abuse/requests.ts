/**
 * Sending one abuse request through `inject` (failing instead of hanging), describing it for a
 * failure message, and the checks every refusal must pass: a 4xx with exactly {"detail","code"},
 * the code matching the status, and nothing internal in it.
 */
import type { FastifyInstance } from 'fastify';
import { errorStatus } from '../../../src/errors.js';

export interface AbuseRequest {
  method: string;
  /** Path and query, already percent-encoded (possibly badly, on purpose). */
  url: string;
  headers?: Record<string, string>;
  payload?: string | Buffer | NodeJS.ReadableStream;
  remoteAddress?: string;
}

export interface AbuseResponse {
  statusCode: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
}

/** Sends through `inject`, failing instead of hanging. */
export async function send(app: FastifyInstance, request: AbuseRequest, timeoutMs = 15_000): Promise<AbuseResponse> {
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms (a hang): ${describeRequest(request)}`)), timeoutMs);
  });
  try {
    const res = await Promise.race([
      app.inject({
        method: request.method as 'GET',
        url: request.url,
        headers: request.headers ?? {},
        ...(request.payload !== undefined ? { payload: request.payload } : {}),
        remoteAddress: request.remoteAddress ?? '127.0.0.1',
      }),
      hang,
    ]);
    return { statusCode: res.statusCode, headers: res.headers, body: res.body };
  } finally {
    clearTimeout(timer);
  }
}

const clip = (text: string, max = 240) => (text.length > max ? `${text.slice(0, max)}…(${text.length} chars)` : text);

export function describeRequest(request: AbuseRequest): string {
  const headers = Object.entries(request.headers ?? {})
    .map(([k, v]) => `${k}: ${clip(JSON.stringify(v), 120)}`)
    .join(', ');
  const payload =
    request.payload === undefined
      ? ''
      : typeof request.payload === 'string'
        ? ` body ${clip(JSON.stringify(request.payload))}`
        : Buffer.isBuffer(request.payload)
          ? ` body <${request.payload.length} bytes: ${clip(JSON.stringify(request.payload.toString('latin1')))}>`
          : ' body <a stream>';
  return `${request.method} ${clip(request.url)}${headers ? ` [${headers}]` : ''}${payload}`;
}

const SNAKE_CASE = /^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$/;

/** What must never appear in an error body: stack traces, error classes, file paths, SQL, framework internals. */
const LEAKS: [RegExp, string][] = [
  [/\n\s*at\s/, 'a stack trace'],
  [/\bat\s+(?:async\s+)?[\w$.<>[\] ]+\s\(?(?:file:|node:|\/)[^)\s]*:\d+:\d+/, 'a stack frame'],
  [/(?:\/work\/|\/home\/|\/usr\/|\/tmp\/|\/src\/|node_modules|file:\/\/)/, 'a file path'],
  [/\b[\w-]+\.(?:ts|js|mjs|cjs):\d+/, 'a source location'],
  [/\b(?:Type|Range|Reference|Syntax|Eval|URI|Sqlite|Database|Query)?Error\b:?/, 'an error class name'],
  [/\bSQLITE_[A-Z_]+|\bselect\s+[\w*"., ]+\s+from\s|\binsert\s+into\s|\bdelete\s+from\s|\bupdate\s+"?\w+"?\s+set\s/i, 'SQL text'],
  [
    /syntax error at or near|violates [\w ]*constraint|relation "|column "|invalid byte sequence|invalid input syntax|out of range for type|datatype mismatch/i,
    'a database message',
  ],
  [/\bFST_[A-Z_]+|\bERR_[A-Z_]+/, 'a framework error code'],
  [/\bundefined\b|\[object Object\]|\bNaN\b/, 'a leaked JavaScript value'],
];

/**
 * The problems of a refusal, empty when it is fine: a 4xx, a JSON body that is exactly
 * `{"detail": <sentence>, "code": <snake_case code of the code table with this status>}`, and
 * nothing internal in it. `echoed` are the caller's own inputs, which a detail may quote.
 */
export function refusalProblems(res: AbuseResponse, echoed: string[] = [], allowedServerErrors: number[] = []): string[] {
  const problems: string[] = [];
  const serverErrorAllowed = res.statusCode !== 500 && allowedServerErrors.includes(res.statusCode);
  if ((res.statusCode < 400 || res.statusCode > 499) && !serverErrorAllowed) problems.push(`status ${res.statusCode} is not a 4xx`);
  const contentType = String(res.headers['content-type'] ?? '');
  if (!contentType.startsWith('application/json')) problems.push(`content type "${contentType}" is not JSON`);
  let body: unknown;
  try {
    body = JSON.parse(res.body);
  } catch {
    problems.push('the body is not JSON');
    return problems;
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    problems.push('the body is not a JSON object');
    return problems;
  }
  const keys = Object.keys(body).sort();
  if (keys.join(',') !== 'code,detail') problems.push(`the body has the keys [${keys.join(', ')}], not exactly [code, detail]`);
  const { detail, code } = body as { detail?: unknown; code?: unknown };
  if (typeof detail !== 'string' || detail.trim() === '') problems.push('detail is not a non-empty string');
  if (typeof code !== 'string' || !SNAKE_CASE.test(code)) problems.push(`code ${JSON.stringify(code)} is not snake_case`);
  else if (!(code in errorStatus)) problems.push(`code "${code}" is not in the code table (src/errors.ts)`);
  else if (errorStatus[code as keyof typeof errorStatus] !== res.statusCode) {
    problems.push(`code "${code}" belongs to status ${errorStatus[code as keyof typeof errorStatus]}, sent with ${res.statusCode}`);
  }
  let text = typeof detail === 'string' ? detail : res.body;
  for (const value of echoed) {
    if (value.length < 2) continue;
    for (const form of [value, safeDecode(value)]) if (form.length >= 2) text = text.split(form).join('');
  }
  for (const [pattern, what] of LEAKS) {
    if (pattern.test(text)) problems.push(`the detail contains ${what} (${pattern})`);
  }
  return problems;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** The code of a standard error body, or undefined. */
export function codeOf(res: AbuseResponse): string | undefined {
  try {
    const body = JSON.parse(res.body) as { code?: unknown };
    return typeof body.code === 'string' ? body.code : undefined;
  } catch {
    return undefined;
  }
}
