/**
 * The server keeps freed memory in the C heap (src/http/allocator.ts): without it glibc hands the
 * top of the heap back after every large body is freed, and the next body faults fresh pages.
 * Counted in page faults of a child process, which do not depend on the machine's load.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const child = fileURLToPath(new URL('../fixtures/allocator-child.ts', import.meta.url));

function faults(mode: 'raised' | 'default'): number {
  const env = { ...process.env };
  // Either variable turns glibc's dynamic thresholds off, which is what is measured.
  delete env.MALLOC_TRIM_THRESHOLD_;
  delete env.MALLOC_MMAP_THRESHOLD_;
  return Number(execFileSync(process.execPath, ['--expose-gc', '--import', 'tsx', child, mode], { env, encoding: 'utf8' }));
}

/** The middle of three runs: how often glibc trims the top depends on when the collector frees, and a run varies. */
function medianFaults(mode: 'raised' | 'default'): number {
  const runs = [faults(mode), faults(mode), faults(mode)].sort((a, b) => a - b);
  return runs[1]!;
}

describe('the allocator of a server process', () => {
  it.runIf(process.platform === 'linux')('faults far fewer fresh pages for 100 KB bodies once the threshold is raised', () => {
    const unraised = medianFaults('default');
    const raised = medianFaults('raised');
    // 5 000 bodies of 25 pages each. Without: each trim of the heap's top is paid again by the
    // next bodies (2 400 to 6 000 faults run to run on one machine of this kind, about ten thousand
    // where the test was written); with: the collector's own, about 900, whatever the run.
    expect(unraised).toBeGreaterThan(2_000);
    expect(raised).toBeLessThan(unraised / 2);
  });
});
