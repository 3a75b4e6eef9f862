import { AppError } from '../../errors.js';

/**
 * How many result streams each account has open in this process. A stream of a running batch
 * reads the database twice every poll until the batch ends or goes quiet for
 * BATCH_RESULTS_WAIT_MS, so an account that opened streams without end would keep the database
 * busy; past `perAccount` open streams a new one is refused with 429 (nothing is read).
 */
export function resultStreamSlots(perAccount: number) {
  const open = new Map<number, number>();
  return {
    /** Takes a slot of the account, or throws 429 `too_many_result_streams`; the returned function gives it back (once). */
    take(accountId: number): () => void {
      const held = open.get(accountId) ?? 0;
      if (held >= perAccount) {
        throw new AppError(
          'too_many_result_streams',
          `This account already has ${held} result streams open (BATCH_RESULT_STREAMS_PER_ACCOUNT=${perAccount}); close one or wait for it to end.`,
          { 'retry-after': '1' },
        );
      }
      open.set(accountId, held + 1);
      let given = false;
      return () => {
        if (given) return;
        given = true;
        const left = (open.get(accountId) ?? 1) - 1;
        if (left <= 0) open.delete(accountId);
        else open.set(accountId, left);
      };
    },
    /** Open streams of an account (for tests and metrics). */
    openOf: (accountId: number): number => open.get(accountId) ?? 0,
  };
}

export type ResultStreamSlots = ReturnType<typeof resultStreamSlots>;
