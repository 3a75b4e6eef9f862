import type { Migration } from 'kysely';

/**
 * 0003–0005 shipped empty (their tables were not ready) and are recorded as applied in databases
 * created then; they stay in the list as no-ops so those databases still migrate. The tables they
 * were meant to hold come in 0006–0008.
 */
export const shippedEmpty: Migration = {
  async up() {},
};
