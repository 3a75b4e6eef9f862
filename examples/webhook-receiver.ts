/**
 * A webhook receiver for Stampgate's score events, verifying each delivery with the `standardwebhooks` library
 * (any Standard Webhooks implementation works: https://www.standardwebhooks.com/).
 *
 * Usage:
 *   WEBHOOK_SECRET=whsec_… npx tsx examples/webhook-receiver.ts
 *
 * Register it (the secret is in the answer, shown once):
 *   curl -X POST -H "X-API-KEY: $API_KEY" -H 'content-type: application/json' \
 *     -d '{"url":"http://127.0.0.1:9000/webhooks","events":["score.updated","score.expiring"]}' \
 *     http://localhost:8000/v2/scorers/1/webhooks
 * (a loopback URL needs WEBHOOK_ALLOW_PRIVATE_TARGETS=true on the server: local testing only.)
 *
 * Environment:
 *   WEBHOOK_SECRET  the endpoint's secret; during a rotation give both, comma-separated
 *   PORT            where to listen (default 9000)
 */
import { createServer } from 'node:http';
import { Webhook } from 'standardwebhooks';

const secrets = (process.env.WEBHOOK_SECRET ?? '').split(',').map((s) => s.trim()).filter(Boolean);
if (secrets.length === 0) throw new Error('set WEBHOOK_SECRET to the whsec_… secret of the endpoint');
const port = Number(process.env.PORT ?? 9000);
// Deliveries are at least once: the same event may come again (same webhook-id). Keep the ids you handled.
const handled = new Set<string>();

function verify(body: string, headers: Record<string, string>): Record<string, unknown> | null {
  for (const secret of secrets) {
    try {
      // Checks the signature over the raw body and that webhook-timestamp is within 5 minutes.
      return new Webhook(secret).verify(body, headers) as Record<string, unknown>;
    } catch {
      // Try the next secret.
    }
  }
  return null;
}

createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    // Verify the raw bytes, before any JSON parsing.
    const body = Buffer.concat(chunks).toString('utf8');
    const headers = {
      'webhook-id': String(req.headers['webhook-id'] ?? ''),
      'webhook-timestamp': String(req.headers['webhook-timestamp'] ?? ''),
      'webhook-signature': String(req.headers['webhook-signature'] ?? ''),
    };
    const event = verify(body, headers);
    if (!event) {
      res.writeHead(400).end('invalid signature');
      return;
    }
    // Answer 2xx quickly; anything else (or no answer within 10 s) is retried later with the same webhook-id.
    res.writeHead(204).end();
    if (handled.has(headers['webhook-id'])) return;
    handled.add(headers['webhook-id']);
    console.log(`${event.type} #${event.event_id}: scorer ${event.scorer_id}, ${event.address} scores ${event.score} (passing: ${event.passing_score}, expires ${event.expiration_timestamp})`);
  });
}).listen(port, () => console.log(`receiving Stampgate webhooks on http://127.0.0.1:${port}/webhooks`));
