/** Waits for SIGTERM or SIGINT, runs `cleanup`, and gives up (exit 1) if it takes too long. */
export function untilSignal(cleanup: () => Promise<void>, limitMs = 15_000): Promise<void> {
  return new Promise<void>((resolve) => {
    const stop = () => {
      const forced = setTimeout(() => process.exit(1), limitMs);
      forced.unref();
      void cleanup().finally(() => resolve());
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
}
