/**
 * Score an airdrop list with a batch, with @stampgate/client.
 *
 * Queues the whole list as one batch (durable on the service: it survives restarts), reads the
 * results as they finish, and writes the addresses that pass the scorer's threshold as CSV
 * (`address,score`) to stdout; a summary goes to stderr. Scores are compared by the service
 * (`passing_score`), never as floating point here.
 *
 * Usage:
 *   BASE_URL=http://localhost:8000 API_KEY=… SCORER_ID=1 npx tsx examples/client/airdrop-batch.ts addresses.txt > eligible.csv
 *
 * addresses.txt: one address per line (a first line `address` is allowed, as in a CSV export).
 *
 * Environment:
 *   BASE_URL   the Stampgate service (default http://localhost:8000)
 *   API_KEY    an integrator API key (required)
 *   SCORER_ID  the scorer to score with (default 1)
 */
import { readFileSync } from 'node:fs';
import { createClient, StampgateError } from '@stampgate/client';

const apiKey = process.env.API_KEY;
const file = process.argv[2];
if (!apiKey || !file) {
  console.error('usage: API_KEY=… npx tsx examples/client/airdrop-batch.ts addresses.txt');
  process.exit(2);
}
const stampgate = createClient({ baseUrl: process.env.BASE_URL ?? 'http://localhost:8000', apiKey });
const scorerId = process.env.SCORER_ID ?? '1';

const addresses = readFileSync(file, 'utf8')
  .split(/\r?\n/)
  .map((line) => line.trim())
  .filter((line, index) => line.length > 0 && !(index === 0 && line.toLowerCase() === 'address'));

try {
  const batch = await stampgate.createBatch(scorerId, addresses);
  console.error(`batch ${batch.id}: ${batch.total} addresses queued`);
  let eligible = 0;
  let failed = 0;
  console.log('address,score');
  for await (const result of stampgate.batchResults(batch.id)) {
    if (result.error !== null) failed += 1;
    else if (result.passing_score) {
      eligible += 1;
      console.log(`${result.address},${result.score}`);
    }
  }
  console.error(`${eligible} of ${addresses.length} addresses pass; ${failed} could not be scored`);
} catch (error) {
  if (!(error instanceof StampgateError)) throw error;
  console.error(`Stampgate refused the list: ${error.status} ${error.code}: ${error.detail}`);
  process.exit(1);
}
