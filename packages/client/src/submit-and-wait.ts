import { ClientErrorCode, StampgateError } from './errors.js';
import { getScore, submitPassport, type ClientContext, type SubmitOptions } from './calls.js';
import type { ScoreRead, SubmittedScore } from './types.js';

/** Options of `submitAndWait`: the submission's own, and how long and how often to poll. */
export interface SubmitAndWaitOptions extends SubmitOptions {
  /** Longest total time, from the call, before `deadline_exceeded` is thrown (default 60 000 ms). */
  timeoutMs?: number;
  /** First pause between polls (default 500 ms); each later pause is 1.5 times longer, up to `maxIntervalMs`. */
  intervalMs?: number;
  /** Longest pause between polls (default 5 000 ms). */
  maxIntervalMs?: number;
}

const TRANSIENT_STATUSES = new Set([429, 502, 503, 504]);

function settled(record: { status: string }): boolean {
  return record.status === 'DONE' || record.status === 'ERROR';
}

function deadlineExceeded(timeoutMs: number, cause?: unknown): StampgateError {
  return new StampgateError({
    code: ClientErrorCode.deadlineExceeded,
    status: 0,
    detail: `The score was not settled within ${timeoutMs} ms; scoring goes on, read it later with getScore.`,
    cause,
  });
}

/**
 * The submission is sent exactly once; only reads are repeated. Each poll is a single attempt (no
 * automatic retries inside): a 429/5xx or a network failure during polling is absorbed by the poll
 * loop itself, which waits at least the answer's `Retry-After` and never past the deadline.
 */
export async function submitAndWait(
  context: ClientContext,
  scorerId: string | number,
  address: string,
  options: SubmitAndWaitOptions,
): Promise<SubmittedScore | ScoreRead> {
  const timeoutMs = options.timeoutMs ?? 60_000;
  const maxIntervalMs = options.maxIntervalMs ?? 5_000;
  let interval = Math.min(options.intervalMs ?? 500, maxIntervalMs);
  const { clock } = context;
  const deadline = clock.now() + timeoutMs;

  const submitted = await submitPassport(context, scorerId, address, options);
  if (settled(submitted)) return submitted;

  let lastProblem: unknown;
  for (;;) {
    const remaining = deadline - clock.now();
    if (remaining <= 0) throw deadlineExceeded(timeoutMs, lastProblem);
    await clock.sleep(Math.min(interval, remaining), options.signal);
    if (clock.now() >= deadline) throw deadlineExceeded(timeoutMs, lastProblem);
    interval = Math.min(maxIntervalMs, Math.ceil(interval * 1.5));
    try {
      const record = await getScore(context, scorerId, address, { signal: options.signal, fetch: context.singleAttempt });
      if (settled(record)) return record;
    } catch (error) {
      const transient =
        error instanceof StampgateError && (TRANSIENT_STATUSES.has(error.status) || error.code === ClientErrorCode.networkError);
      if (!transient) throw error;
      lastProblem = error;
      const retryAfter = error.retryAfterMs ?? 0;
      if (clock.now() + retryAfter >= deadline) throw deadlineExceeded(timeoutMs, error);
      interval = Math.max(interval, retryAfter);
    }
  }
}
