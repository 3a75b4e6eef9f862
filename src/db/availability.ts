/**
 * Whether the database answers, as far as this process can tell, and which errors mean it does
 * not (rather than that a query was wrong). One warning when an outage starts, one line when it
 * ends: during an outage every request that needs the database fails the same way, and a stack
 * trace per request would drown everything else in the log.
 */

export interface AvailabilityLog {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

// SQLSTATE classes and codes of a lost or refused connection (class 08), a server that is
// shutting down, starting or full (57P0x, 53300), and statement_timeout (57014).
const pgCodes = new Set(['57P01', '57P02', '57P03', '53300', '57014']);
const socketCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
]);
// node-postgres reports its own connection failures without a code, only with these messages.
const pgMessages =
  /Connection terminated|timeout exceeded when trying to connect|Query read timeout|is not queryable|Connection ended unexpectedly|Client has encountered a connection error|connect ECONNREFUSED|Cannot use a pool after calling end/i;
// A lock held longer than the busy timeout, or a file that cannot be opened or read.
const sqliteCodes = /^SQLITE_(BUSY|LOCKED|CANTOPEN|IOERR|PROTOCOL)/;

// Waits that ran out (a lock held by another writer, a statement past its budget): answered 503
// like an outage, but the database does answer, so they neither start nor end one.
const contentionCodes = new Set(['57014', 'SQLITE_BUSY', 'SQLITE_LOCKED']);

function isContention(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  return typeof code === 'string' && (contentionCodes.has(code) || code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}

export function isDatabaseUnavailable(error: unknown): boolean {
  for (let current = error, depth = 0; current && depth < 4; depth++) {
    const { code, message } = current as { code?: unknown; message?: unknown };
    if (typeof code === 'string') {
      if (pgCodes.has(code) || code.startsWith('08') || socketCodes.has(code) || sqliteCodes.test(code)) return true;
    }
    if (typeof message === 'string' && pgMessages.test(message)) return true;
    // AggregateError (several addresses refused) and wrapped causes.
    const errors = (current as { errors?: unknown[] }).errors;
    if (Array.isArray(errors) && errors.some((inner) => isDatabaseUnavailable(inner))) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

export class DatabaseAvailability {
  log: AvailabilityLog;
  #since: number | null = null;
  readonly #clock: () => number;

  constructor(log: AvailabilityLog = { warn: () => {}, info: () => {} }, clock: () => number = Date.now) {
    this.log = log;
    this.#clock = clock;
  }

  /** When the current outage started, or null while the database answers. */
  get outageSince(): number | null {
    return this.#since;
  }

  /** Notes an error; returns whether it means the database is unavailable. */
  observe(error: unknown): boolean {
    if (!isDatabaseUnavailable(error)) return false;
    if (this.#since === null && !isContention(error)) {
      this.#since = this.#clock();
      this.log.warn(
        { err: shortMessage(error) },
        'database unavailable: requests that need it are answered 503 database_unavailable until it answers again',
      );
    }
    return true;
  }

  /**
   * A query succeeded: ends the outage, if there was one. A query sent before the outage began
   * can report success after the first failure was seen; it proves nothing about the database now.
   */
  succeeded(durationMs = 0): void {
    if (this.#since === null) return;
    const now = this.#clock();
    if (now - durationMs < this.#since) return;
    const outageMs = now - this.#since;
    this.#since = null;
    this.log.info({ outageMs }, `database available again after ${(outageMs / 1000).toFixed(1)} s`);
  }
}

function shortMessage(error: unknown): string {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  const text = typeof message === 'string' && message !== '' ? message : String(error);
  return typeof code === 'string' ? `${code}: ${text}` : text;
}
