/**
 * Gate a page on a passport score, with @stampgate/client.
 *
 * A tiny web server: `GET /members?address=0x…` scores the address (one submission, then polling)
 * and serves the members' page when the score reaches the threshold, or 403 with the score. The API
 * key stays on this server; the browser only sends its address (in a real site: the address the
 * user proved with a wallet signature, e.g. Sign-In with Ethereum).
 *
 * Usage:
 *   BASE_URL=http://localhost:8000 API_KEY=… SCORER_ID=1 npx tsx examples/gate-page.ts
 *   curl 'http://127.0.0.1:3000/members?address=0x…'
 *
 * Environment:
 *   BASE_URL   the Stampgate service (default http://localhost:8000)
 *   API_KEY    an integrator API key (required)
 *   SCORER_ID  the scorer to score with (default 1)
 *   THRESHOLD  the score needed, a decimal (default 20)
 *   PORT       where this page listens on 127.0.0.1 (default 3000; 0 picks a free port)
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient, StampgateError } from '@stampgate/client';

const apiKey = process.env.API_KEY;
if (!apiKey) {
  console.error('API_KEY is required');
  process.exit(2);
}
const stampgate = createClient({ baseUrl: process.env.BASE_URL ?? 'http://localhost:8000', apiKey });
const scorerId = process.env.SCORER_ID ?? '1';
const threshold = process.env.THRESHOLD ?? '20';

/** `a >= b` for non-negative decimal strings, exactly (scores are decimals: never compare them as floats). */
function atLeast(a: string, b: string): boolean {
  const scale = (text: string) => {
    const [whole = '0', fraction = ''] = text.split('.');
    return BigInt(whole + fraction.padEnd(18, '0').slice(0, 18));
  };
  return scale(a) >= scale(b);
}

function page(status: number, title: string, text: string) {
  return { status, body: `<!doctype html><title>${title}</title><h1>${title}</h1><p>${text}</p>\n` };
}

async function members(address: string | null) {
  if (!address) return page(400, 'Who are you?', 'Add ?address=0x… to the URL.');
  try {
    const record = await stampgate.submitAndWait(scorerId, address, { timeoutMs: 20_000 });
    if (record.status !== 'DONE' || record.score === null) return page(503, 'Try again', `Scoring failed: ${record.error ?? 'unknown'}`);
    if (atLeast(record.score, threshold)) return page(200, 'Welcome, member', `Your score is ${record.score}.`);
    return page(403, 'Not yet', `Your score is ${record.score}; this page needs ${threshold}. Collect more stamps.`);
  } catch (error) {
    if (error instanceof StampgateError && error.status === 400) return page(400, 'Not an address', error.detail);
    if (error instanceof StampgateError) return page(503, 'Try again', `The scorer is unavailable (${error.code}).`);
    throw error;
  }
}

const server = createServer(async (request, response) => {
  const url = new URL(request.url ?? '/', 'http://localhost');
  const answer = url.pathname === '/members' ? await members(url.searchParams.get('address')) : page(404, 'Not found', 'Try /members?address=0x…');
  response.writeHead(answer.status, { 'content-type': 'text/html; charset=utf-8' });
  response.end(answer.body);
});
server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
