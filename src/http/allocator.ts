/**
 * The C allocator of a server that answers large bodies, kept from giving memory back after
 * every response. glibc's malloc returns the top of its heap to the system as soon as more than
 * 128 KB of it is free, so a server that allocates and drops a 100 KB body per request (the
 * uncached bounty list, its bytes from SQLite) takes page faults on fresh memory for each one:
 * measured, two thirds of that request's CPU. glibc raises the threshold by itself, to twice the
 * block's size, when a block it mapped for one large allocation is freed; Node offers no
 * `mallopt`, so one such block (16 MiB: the heap may then keep 32 MiB free, and allocations
 * below 16 MiB come from it) is allocated at start and left to the garbage collector.
 * `MALLOC_TRIM_THRESHOLD_` or `MALLOC_MMAP_THRESHOLD_` in the environment turn these dynamic
 * thresholds off, and so this too; on another C library it costs one allocation.
 */
const blockBytes = 16 * 1024 * 1024;
let raised = false;

export function keepFreedMemoryInHeap(): void {
  if (raised) return;
  raised = true;
  // Allocated and dropped: the threshold moves when the garbage collector frees it.
  Buffer.alloc(blockBytes);
}
