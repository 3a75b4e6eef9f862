import type { Clock } from '@stampgate/client';

/** A clock whose waits return at once and move its time forward: the waits asked for are in `sleeps`. */
export function fakeClock(): Clock & { sleeps: number[] } {
  let now = Date.now();
  const sleeps: number[] = [];
  return {
    sleeps,
    now: () => now,
    sleep: async (ms) => {
      sleeps.push(ms);
      now += ms;
    },
  };
}

/** The real `fetch`, with a log of every request it carried (method and path). */
export function recordingFetch() {
  const requests: { method: string; path: string; status: number | null; retryAfter: string | null }[] = [];
  const fetchFn = async (request: Request) => {
    const entry = { method: request.method, path: new URL(request.url).pathname, status: null as number | null, retryAfter: null as string | null };
    requests.push(entry);
    const response = await fetch(request);
    entry.status = response.status;
    entry.retryAfter = response.headers.get('retry-after');
    return response;
  };
  return { requests, fetch: fetchFn };
}
