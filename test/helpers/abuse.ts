/**
 * Building blocks of the bad-input and abuse tests (test/http/abuse.test.ts): the operations of
 * the app's own OpenAPI document, database snapshots, the checks every refusal must pass, and
 * tables and fast-check arbitraries of nasty inputs.
 */
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { type Kysely, sql } from 'kysely';
import { errorStatus } from '../../src/errors.js';

// ---------------------------------------------------------------------------------------------
// The OpenAPI document

export type JsonSchema = {
  type?: string | string[];
  $ref?: string;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  default?: unknown;
  example?: unknown;
  examples?: unknown[];
  enum?: unknown[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  [key: string]: unknown;
};

export interface OpenApiParameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema?: JsonSchema;
}

interface OpenApiOperation {
  parameters?: OpenApiParameter[];
  requestBody?: { required?: boolean; content?: Record<string, { schema?: JsonSchema }> };
  responses?: Record<string, unknown>;
}

export interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, OpenApiOperation>>;
  components?: { schemas?: Record<string, JsonSchema> };
}

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
export const HTTP_METHODS: HttpMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

export interface Operation {
  /** `GET /registry/score/{scorer_id}` */
  id: string;
  method: HttpMethod;
  /** The OpenAPI path template. */
  path: string;
  pathParams: OpenApiParameter[];
  queryParams: OpenApiParameter[];
  /** The JSON body schema (references resolved), or null when the operation documents none. */
  body: JsonSchema | null;
  /** Documented response statuses. */
  statuses: number[];
}

/** Follows `$ref`s into `components.schemas`, recursively. */
export function resolveSchema(doc: OpenApiDocument, schema: JsonSchema | undefined, depth = 0): JsonSchema | undefined {
  if (!schema || depth > 20) return schema;
  if (typeof schema.$ref === 'string') {
    const name = schema.$ref.replace(/^#\/components\/schemas\//, '');
    return resolveSchema(doc, doc.components?.schemas?.[name], depth + 1);
  }
  const out: JsonSchema = { ...schema };
  if (schema.properties) {
    out.properties = Object.fromEntries(Object.entries(schema.properties).map(([k, v]) => [k, resolveSchema(doc, v, depth + 1) ?? {}]));
  }
  if (schema.items) out.items = resolveSchema(doc, schema.items, depth + 1);
  return out;
}

/** Every operation the document lists (HEAD and OPTIONS left out: they carry no input of their own). */
export function listOperations(doc: OpenApiDocument): Operation[] {
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const [lower, operation] of Object.entries(item)) {
      const method = lower.toUpperCase() as HttpMethod;
      if (!HTTP_METHODS.includes(method)) continue;
      const parameters = (operation.parameters ?? []).map((p) => ({ ...p, schema: resolveSchema(doc, p.schema) }));
      const content = operation.requestBody?.content ?? {};
      const jsonBody = content['application/json']?.schema ?? Object.values(content)[0]?.schema;
      operations.push({
        id: `${method} ${path}`,
        method,
        path,
        pathParams: parameters.filter((p) => p.in === 'path'),
        queryParams: parameters.filter((p) => p.in === 'query'),
        body: jsonBody ? (resolveSchema(doc, jsonBody) ?? null) : null,
        statuses: Object.keys(operation.responses ?? {})
          .map(Number)
          .filter((n) => Number.isInteger(n)),
      });
    }
  }
  return operations;
}

/**
 * The routes the server really serves (from `printRoutes`), as OpenAPI templates with their methods.
 * Routes whose parameters at one position have different names share a router node printed as
 * `:scorer_id|:address`; `paths` lists every reading of such a path (`path` is the first).
 */
export function servedRoutes(app: FastifyInstance): { path: string; paths: string[]; methods: string[] }[] {
  const out: { path: string; paths: string[]; methods: string[] }[] = [];
  const stack: { depth: number; prefix: string }[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const match = /^([\s│├└─]*)(.*?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!match || !match[2]) continue;
    const depth = match[1]!.length;
    while (stack.length > 0 && stack[stack.length - 1]!.depth >= depth) stack.pop();
    const parent = stack.length > 0 ? stack[stack.length - 1]!.prefix : '';
    const prefix = parent + match[2];
    stack.push({ depth, prefix });
    if (match[3]) {
      const paths = parameterReadings(prefix).map((path) => path.replace(/:(\w+)/g, '{$1}'));
      out.push({ path: paths[0]!, paths, methods: match[3].split(',').map((m) => m.trim()) });
    }
  }
  return out;
}

/** `/a/:x|:y/b` → [`/a/:x/b`, `/a/:y/b`] (every combination when several segments alternate). */
function parameterReadings(path: string): string[] {
  const match = /:\w+(?:\|:\w+)+/.exec(path);
  if (!match) return [path];
  const head = path.slice(0, match.index);
  const tails = parameterReadings(path.slice(match.index + match[0].length));
  return match[0].split('|').flatMap((name) => tails.map((tail) => head + name + tail));
}

// ---------------------------------------------------------------------------------------------
// Baseline values from schemas

/** A value the schema accepts, for parameters and fields the test knows nothing special about. */
export function sampleFor(schema: JsonSchema | undefined): unknown {
  if (!schema) return 'x';
  if (schema.example !== undefined) return schema.example;
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if (schema.default !== undefined) return schema.default;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  const variants = schema.anyOf ?? schema.oneOf;
  if (variants && variants.length > 0) return sampleFor(variants[0]);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'integer':
    case 'number':
      return typeof schema.minimum === 'number' ? Math.max(schema.minimum, 1) : 1;
    case 'boolean':
      return true;
    case 'null':
      return null;
    case 'array':
      return Array.from({ length: schema.minItems ?? 0 }, () => sampleFor(schema.items));
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const name of schema.required ?? []) out[name] = sampleFor(schema.properties?.[name]);
      return out;
    }
    default: {
      if (typeof schema.pattern === 'string') {
        return fc.sample(fc.stringMatching(new RegExp(schema.pattern)), { numRuns: 1, seed: 42 })[0];
      }
      return 'x'.repeat(Math.max(1, schema.minLength ?? 1));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Database snapshots

export interface TableState {
  rows: number;
  checksum: string;
}
export type DatabaseSnapshot = Record<string, TableState>;

const CHANGE_COUNTS = 'abuse_row_changes';

async function tablesOf(db: Kysely<any>): Promise<{ tables: string[]; dialect: 'sqlite' | 'postgres' }> {
  // On PostgreSQL the introspection lists every schema: keep the one this test runs in.
  let schema: string | undefined;
  try {
    schema = (await sql<{ s: string }>`select current_schema() as s`.execute(db)).rows[0]?.s;
  } catch {
    schema = undefined; // SQLite
  }
  const tables = (await db.introspection.getTables())
    .filter((t) => !t.isView && (schema === undefined || t.schema === schema) && t.name !== CHANGE_COUNTS)
    .map((t) => t.name)
    .sort();
  if (tables.length === 0) throw new Error('The database has no tables to watch.');
  return { tables, dialect: schema === undefined ? 'sqlite' : 'postgres' };
}

function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v));
}

async function tableState(db: Kysely<any>, name: string): Promise<TableState> {
  const rows = await db.selectFrom(name).selectAll().execute();
  const lines = rows.map(canonical).sort();
  return { rows: rows.length, checksum: createHash('sha256').update(lines.join('\n')).digest('hex').slice(0, 16) };
}

/** Row count and a checksum of the rows of every table (order-independent). */
export async function snapshotDatabase(db: Kysely<any>, only?: string[]): Promise<DatabaseSnapshot> {
  const names = only ?? (await tablesOf(db)).tables;
  return Object.fromEntries(await Promise.all(names.map(async (name) => [name, await tableState(db, name)] as const)));
}

/** The tables whose rows differ, described for a failure message. */
export function changedTables(before: DatabaseSnapshot, after: DatabaseSnapshot): string[] {
  const names = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  return names
    .filter((n) => before[n]?.rows !== after[n]?.rows || before[n]?.checksum !== after[n]?.checksum)
    .map((n) => `${n} (${before[n]?.rows ?? 'absent'} → ${after[n]?.rows ?? 'absent'} rows${before[n]?.rows === after[n]?.rows ? ', contents changed' : ''})`);
}

/**
 * Watches every table of a test database for changes, cheaply enough to look after every
 * request: triggers (in the test's own throw-away database) count the rows written per table,
 * in the writing transaction, so rolled-back writes do not count; a table whose count moved is
 * then read in full and compared with its last state, which also catches a write that restored
 * the table exactly.
 */
export class DatabaseWatch {
  private tables: string[] = [];
  private counts = new Map<string, number>();
  private states: DatabaseSnapshot = {};

  constructor(private readonly db: Kysely<any>) {}

  async install(): Promise<void> {
    const { tables, dialect } = await tablesOf(this.db);
    this.tables = tables;
    const id = (name: string) => `"${name.replace(/"/g, '""')}"`;
    const text = (value: string) => `'${value.replace(/'/g, "''")}'`;
    await sql.raw(`create table ${CHANGE_COUNTS} (t text primary key, n bigint not null)`).execute(this.db);
    for (const table of tables) await sql.raw(`insert into ${CHANGE_COUNTS} (t, n) values (${text(table)}, 0)`).execute(this.db);
    if (dialect === 'postgres') {
      await sql
        .raw(
          `create function ${CHANGE_COUNTS}_bump() returns trigger language plpgsql as $$ ` +
            `begin update ${CHANGE_COUNTS} set n = n + 1 where t = TG_TABLE_NAME; return null; end $$`,
        )
        .execute(this.db);
      for (const table of tables) {
        await sql
          .raw(`create trigger ${CHANGE_COUNTS} after insert or update or delete on ${id(table)} for each row execute function ${CHANGE_COUNTS}_bump()`)
          .execute(this.db);
      }
    } else {
      for (const table of tables) {
        for (const event of ['insert', 'update', 'delete']) {
          await sql
            .raw(
              `create trigger ${id(`${CHANGE_COUNTS}_${event}_${table}`)} after ${event} on ${id(table)} ` +
                `begin update ${CHANGE_COUNTS} set n = n + 1 where t = ${text(table)}; end`,
            )
            .execute(this.db);
        }
      }
    }
    this.counts = await this.readCounts();
    this.states = await snapshotDatabase(this.db, this.tables);
  }

  private async readCounts(): Promise<Map<string, number>> {
    const { rows } = await sql<{ t: string; n: number | string }>`select t, n from ${sql.table(CHANGE_COUNTS)}`.execute(this.db);
    return new Map(rows.map((r) => [r.t, Number(r.n)]));
  }

  /** The tables whose rows changed since the last call, described. */
  async changes(): Promise<string[]> {
    const counts = await this.readCounts();
    const moved = this.tables.filter((t) => counts.get(t) !== this.counts.get(t));
    this.counts = counts;
    if (moved.length === 0) return [];
    const now = await snapshotDatabase(this.db, moved);
    const before = Object.fromEntries(moved.map((t) => [t, this.states[t]!]));
    Object.assign(this.states, now);
    return changedTables(before, now);
  }
}

// ---------------------------------------------------------------------------------------------
// Requests and the checks on responses

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

/**
 * CPU time per request of a server running in this process (`inject`), worst first: the fuzz
 * pass must find no request that costs more than a few milliseconds before it is answered.
 * process.cpuUsage counts every thread of the process, so a figure is an upper bound.
 */
export class CpuCosts {
  private worstCases: { id: string; request: AbuseRequest; ms: number }[] = [];
  count = 0;

  constructor(private readonly keep = 10) {}

  async measure<T>(id: string, request: AbuseRequest, work: () => Promise<T>): Promise<T> {
    const before = process.cpuUsage();
    const result = await work();
    const used = process.cpuUsage(before);
    this.add(id, request, (used.user + used.system) / 1000);
    return result;
  }

  add(id: string, request: AbuseRequest, ms: number): void {
    this.count++;
    if (this.worstCases.length >= this.keep && ms <= this.worstCases[this.worstCases.length - 1]!.ms) return;
    this.worstCases.push({ id, request, ms });
    this.worstCases.sort((a, b) => b.ms - a.ms);
    this.worstCases.length = Math.min(this.worstCases.length, this.keep);
  }

  worst(): { id: string; request: string; ms: number }[] {
    return this.worstCases.map((w) => ({ id: w.id, request: describeRequest(w.request), ms: w.ms }));
  }

  /**
   * The requests over `limitMs`, each sent again up to `attempts` times and kept at its lowest
   * cost: a request that is expensive stays over, one that met a garbage collection or a busy
   * machine (another thread's CPU counts too) does not. Refused requests change nothing, so
   * sending them again is harmless.
   */
  async confirmedOver(limitMs: number, replay: (request: AbuseRequest) => Promise<unknown>, attempts = 3): Promise<{ id: string; request: string; ms: number }[]> {
    const over: { id: string; request: string; ms: number }[] = [];
    for (const w of this.worstCases.filter((c) => c.ms > limitMs)) {
      let lowest = w.ms;
      // A streamed body was consumed by the first send: such a request stands as measured.
      const replayable = w.request.payload === undefined || typeof w.request.payload === 'string' || Buffer.isBuffer(w.request.payload);
      for (let i = 0; replayable && i < attempts && lowest > limitMs; i++) {
        const before = process.cpuUsage();
        await replay(w.request);
        const used = process.cpuUsage(before);
        lowest = Math.min(lowest, (used.user + used.system) / 1000);
      }
      if (lowest > limitMs) over.push({ id: w.id, request: describeRequest(w.request), ms: lowest });
    }
    return over;
  }
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

// ---------------------------------------------------------------------------------------------
// Encoding

const hex = (byte: number) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;

/**
 * Percent-encodes any JavaScript string, lone surrogates included (as the three WTF-8 bytes a
 * careless client would send; `encodeURIComponent` throws on them).
 */
export function encodeLoose(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    const next = text.charCodeAt(i + 1);
    if (unit >= 0xd800 && unit <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
      out += encodeURIComponent(text.slice(i, i + 2));
      i++;
    } else if (unit >= 0xd800 && unit <= 0xdfff) {
      out += hex(0xe0 | (unit >> 12)) + hex(0x80 | ((unit >> 6) & 0x3f)) + hex(0x80 | (unit & 0x3f));
    } else {
      out += encodeURIComponent(text[i]!);
    }
  }
  return out;
}


/** An input value: text to be encoded, or raw bytes already percent-encoded (possibly invalid on purpose). */
export type Nasty = { text: string } | { raw: string };

export const encoded = (value: Nasty): string => ('raw' in value ? value.raw : encodeLoose(value.text));
export const readable = (value: Nasty): string => ('raw' in value ? value.raw : value.text);

// ---------------------------------------------------------------------------------------------
// Nasty inputs

const longString = (n: number, unit = 'a') => unit.repeat(n);

/** Strings every text input gets. */
export const NASTY_STRINGS: string[] = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udfffy',
  '\uffff\ufffe',
  '\ufeffabc',
  '😀'.repeat(20),
  'e\u0301\u202e\u200b',
  '\n',
  '\r\nX-Injected: 1',
  "' OR 1=1 --",
  '1; DROP TABLE scores',
  '"; DROP TABLE scores; --',
  "') UNION SELECT * FROM api_keys --",
  '%',
  '%00',
  '\\',
  '../../../../etc/passwd',
  '<script>alert(1)</script>',
  '${7*7}{{7*7}}',
  '__proto__',
  'constructor',
  'null',
  'true',
  'NaN',
  '-1',
  longString(10_000),
  longString(3_000, 'é'),
];

/** The few of NASTY_STRINGS and RAW_ESCAPES that plain text filters get (the arbitraries cover the rest). */
export const NASTY_CORE: string[] = [
  '',
  '\u0000',
  'x\udfffy',
  '😀'.repeat(20),
  '\r\nX-Injected: 1',
  "' OR 1=1 --",
  '1; DROP TABLE scores',
  '%',
  '__proto__',
  longString(10_000),
];
export const RAW_CORE: string[] = ['%00', '%ED%A0%80', '%FF', '%zz'];

/** Bytes a browser would never send: invalid UTF-8 and invalid percent-escapes. */
export const RAW_ESCAPES: string[] = ['%00', '%ED%A0%80', '%FF', '%C0%AF', '%E2%82', '%', '%zz', '%2e%2e%2f', '%252e', '%u0041', '%0d%0a'];

/** For integers (limit, offset, pk, ids). */
export const INTEGER_STRINGS: string[] = [
  '-1',
  '-0',
  '1.5',
  '1.0',
  '1e3',
  '1e400',
  '01',
  '+1',
  ' 1',
  '0x10',
  '1_000',
  '١',
  '１',
  'NaN',
  'Infinity',
  '-Infinity',
  '2147483648',
  '9007199254740993',
  '9999999999999999999',
  '99999999999999999999999999999999',
  '1,2',
  'true',
  '[]',
];

const A40 = 'ab'.repeat(20);
/** For addresses. */
export const MALFORMED_ADDRESSES: string[] = [
  '0x',
  `0x${'a'.repeat(39)}`,
  `0x${'a'.repeat(41)}`,
  A40,
  `0x${'g'.repeat(40)}`,
  `0x ${A40.slice(1)}`,
  ` 0x${A40}`,
  `0x${A40} `,
  `0x${A40}\n`,
  `0x${A40}\u0000`,
  `0x${'０'.repeat(40)}`,
  `0x${'a'.repeat(38)}é`,
  'vitalik.eth',
  `did:pkh:eip155:1:0x${A40}`,
  `0x${A40}${'a'.repeat(10_000)}`,
  `0x0x${A40.slice(2)}`,
  `-0x${A40}`,
];

/** For ISO 8601 timestamps. */
export const MALFORMED_TIMESTAMPS: string[] = [
  'yesterday',
  '2026-13-01T00:00:00Z',
  '2026-02-30T00:00:00Z',
  '2026-03-01T25:00:00Z',
  '2026-03-01T12:00:00+99:00',
  '2026-03-01T12:60:00Z',
  '0000-00-00',
  '2026-03-01T12:00:00ZZ',
  '1e100',
  'NaN',
  '2026-03-01T12:00:00.1234567891234567Z',
  '-271821-04-20T00:00:00Z',
  '+275760-09-13T00:00:00.001Z',
  '9999999999999',
];

/** Near-miss and hostile page/session tokens. */
export const MALFORMED_TOKENS: string[] = [
  'p1.',
  'p1.LTE',
  'p1.OTk5OTk5OTk5OTk5',
  'p1.MS41',
  'p1.MA==',
  'p2.MA',
  'p1.' + 'A'.repeat(16),
  'p1.' + 'A'.repeat(61),
  'P1.MA',
  'p1.MA.extra',
];

/** A signature-looking string of the wrong shape. */
export const MALFORMED_SIGNATURES: string[] = [
  '0x',
  '0x00',
  `0x${'00'.repeat(65)}`,
  `0x${'ff'.repeat(65)}`,
  `0x${'zz'.repeat(65)}`,
  `0x${'11'.repeat(64)}`,
  `0x${'11'.repeat(66)}`,
  `${'11'.repeat(65)}`,
  `0X${'11'.repeat(65)}`,
  `0x${'1'.repeat(129)}`,
  `0x${'11'.repeat(64)}1b`,
  `0x${'11'.repeat(64)}05`,
];

/** Values of the wrong JSON type for any body field. */
export const WRONG_TYPES: unknown[] = [
  null,
  0,
  -1,
  1.5,
  1e308,
  -1e308,
  true,
  false,
  [],
  {},
  [null],
  ['x', 'y'],
  { $gt: '' },
  { __proto__: { polluted: true } },
  JSON.parse('{"__proto__": {"polluted": true}}'),
  Array.from({ length: 1000 }, (_, i) => i),
];

// ---------------------------------------------------------------------------------------------
// Arbitraries

const dangerousUnit = fc.constantFrom(
  ...['\u0000', '\ud800', '\udfff', '\uffff', '\u202e', '\n', ' ', 'é', '😀'],
  ...['%', "'", '"', ';', '-', '\\', '/', '.', '*', '?', '#', '&', '=', '+', '0', 'x', 'a'],
);

/** Any text: full Unicode (lone surrogates included), graphemes, and runs of dangerous characters. */
export const anyText: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: dangerousUnit, maxLength: 40 }),
  fc.constantFrom(...NASTY_STRINGS),
);

/** Numbers of every kind, written as text. */
export const anyNumberText: fc.Arbitrary<string> = fc.oneof(
  fc.integer().map(String),
  fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }).map(String),
  fc.double().map(String),
  fc.constantFrom(...INTEGER_STRINGS),
);

/** A near miss of a pattern: a matching value with one character inserted, removed or replaced. */
export function nearMiss(pattern: string): fc.Arbitrary<string> {
  return fc
    .tuple(fc.stringMatching(new RegExp(pattern)), fc.nat(), fc.constantFrom('insert', 'remove', 'replace'), fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }))
    .map(([valid, at, how, char]) => {
      const i = valid.length === 0 ? 0 : at % valid.length;
      if (how === 'insert') return valid.slice(0, i) + char + valid.slice(i);
      if (how === 'remove') return valid.slice(0, i) + valid.slice(i + 1);
      return valid.slice(0, i) + char + valid.slice(i + 1);
    });
}

/** Arbitrary text for a parameter of this schema. */
export function textFor(schema: JsonSchema | undefined): fc.Arbitrary<string> {
  const type = Array.isArray(schema?.type) ? schema?.type[0] : schema?.type;
  const options: fc.Arbitrary<string>[] = [anyText];
  if (type === 'integer' || type === 'number') options.push(anyNumberText);
  if (typeof schema?.pattern === 'string') options.push(nearMiss(schema.pattern));
  return fc.oneof(...options);
}

/** Arbitrary JSON of any type for a body field. */
export function jsonFor(schema: JsonSchema | undefined): fc.Arbitrary<unknown> {
  return fc.oneof(fc.jsonValue({ maxDepth: 3 }), textFor(schema), fc.constantFrom(...WRONG_TYPES));
}

/** JSON nested `depth` levels deep, as text (JSON.stringify would overflow the stack first). */
export function deeplyNested(depth: number, kind: 'array' | 'object' = 'array'): string {
  return kind === 'array' ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
}
