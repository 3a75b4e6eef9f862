import { AppError } from '../../errors.js';

/**
 * How many of something each account has open in this process, up to `perAccount`: past it a
 * new one is refused with `refusal(held)` (a 429) before any work is done for it.
 */
export function accountSlots(perAccount: number, refusal: (held: number) => AppError) {
  const open = new Map<number, number>();
  return {
    /** Takes a slot of the account, or throws the refusal; the returned function gives it back (once). */
    take(accountId: number): () => void {
      const held = open.get(accountId) ?? 0;
      if (held >= perAccount) throw refusal(held);
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
    /** Slots an account holds (for tests and metrics). */
    openOf: (accountId: number): number => open.get(accountId) ?? 0,
  };
}

export type AccountSlots = ReturnType<typeof accountSlots>;

/**
 * Open result streams per account. A stream of a running batch reads the database twice every
 * poll until the batch ends or goes quiet for BATCH_RESULTS_WAIT_MS, so an account that opened
 * streams without end would keep the database busy.
 */
export function resultStreamSlots(perAccount: number): AccountSlots {
  return accountSlots(
    perAccount,
    (held) =>
      new AppError(
        'too_many_result_streams',
        `This account already has ${held} result streams open (BATCH_RESULT_STREAMS_PER_ACCOUNT=${perAccount}); close one or wait for it to end.`,
        { 'retry-after': '1' },
      ),
  );
}

/**
 * Batch uploads under way per account. Each reads its body, checks every address and writes in
 * steps: bounded work each, but an account sending many at once would still take the process's
 * time and memory from everyone else.
 */
export function uploadSlots(perAccount: number): AccountSlots {
  return accountSlots(
    perAccount,
    (held) =>
      new AppError(
        'too_many_batch_uploads',
        `This account already has ${held} batch uploads under way (BATCH_UPLOADS_PER_ACCOUNT=${perAccount}); wait for one to be answered.`,
        { 'retry-after': '1' },
      ),
  );
}

export type ResultStreamSlots = AccountSlots;
