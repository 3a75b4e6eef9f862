/**
 * Gate a page on a passport score, with @stampgate/client.
 *
 * A tiny web server: `GET /members?address=0x…` scores the address now (v2: one synchronous call,
 * from the stamps the service holds) and serves the members' page when it passes the scorer's
 * threshold, or 403 with its score. The threshold is the scorer's own (`stampgate scorers create
 * --threshold 20`), compared exactly by the service: no floating point here. The API key stays on
 * this server; the browser only sends its address (in a real site: the address the user proved with
 * a wallet signature, e.g. Sign-In with Ethereum).
 *
 * Usage:
 *   BASE_URL=http://localhost:8000 API_KEY=… SCORER_ID=1 npx tsx examples/client/gate-page.ts
 *   curl 'http://127.0.0.1:3000/members?address=0x…'
 *
 * Environment:
 *   BASE_URL   the Stampgate service (default http://localhost:8000)
 *   API_KEY    an integrator API key with read_scores (required)
 *   SCORER_ID  the scorer to score with (default 1)
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

function page(status: number, title: string, text: string) {
  return { status, body: `<!doctype html><title>${title}</title><h1>${title}</h1><p>${text}</p>\n` };
}

async function members(address: string | null) {
  if (!address) return page(400, 'Who are you?', 'Add ?address=0x… to the URL.');
  try {
    const result = await stampgate.score(scorerId, address);
    if (result.error !== null) return page(503, 'Try again', `Scoring failed: ${result.error}`);
    if (result.passing_score) return page(200, 'Welcome, member', `Your score is ${result.score}.`);
    return page(403, 'Not yet', `Your score is ${result.score}; this page needs ${result.threshold}. Collect more stamps.`);
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
