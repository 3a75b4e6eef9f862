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

describe('the allocator of a server process', () => {
  it.runIf(process.platform === 'linux')('faults far fewer fresh pages for 100 KB bodies once the threshold is raised', () => {
    const unraised = faults('default');
    const raised = faults('raised');
    // 5 000 bodies of 25 pages each: ten thousand faults or so without (each trim of the heap's
    // top is paid again by the next bodies), under a thousand with.
    expect(unraised).toBeGreaterThan(4_000);
    expect(raised).toBeLessThan(unraised / 4);
  });
});
