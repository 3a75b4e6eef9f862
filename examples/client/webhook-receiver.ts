/**
 * Receive Stampgate's score webhooks, with @stampgate/client's verifyWebhook.
 *
 * A web server with one route, `POST /webhooks/stampgate`: it checks the Standard Webhooks
 * signature over the raw body (before any JSON parsing), ignores repeats of an event it already
 * handled (delivery is at least once; `webhook-id` is the event id), prints each new event as a JSON
 * line and answers 204 quickly (slow answers are retried by the sender). Anything unsigned, forged
 * or older than five minutes gets 400.
 *
 * Usage:
 *   WEBHOOK_SECRET=whsec_… PORT=4000 npx tsx examples/client/webhook-receiver.ts
 *   then register http(s)://<this host>:4000/webhooks/stampgate as the scorer's webhook URL.
 *
 * Environment:
 *   WEBHOOK_SECRET  the endpoint's whsec_ secret, shown once when the webhook was created; during a
 *                   rotation, both secrets separated by a comma
 *   PORT            where this receiver listens on 127.0.0.1 (default 4000; 0 picks a free port)
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifyWebhook, WebhookVerificationError } from '@stampgate/client';

const secrets = (process.env.WEBHOOK_SECRET ?? '').split(',').filter((s) => s.length > 0);
if (secrets.length === 0) {
  console.error('WEBHOOK_SECRET is required');
  process.exit(2);
}
const MAX_BODY_BYTES = 1_000_000;
// A real receiver keeps this in its database, next to the effect of handling the event.
const handled = new Set<string>();

const server = createServer(async (request, response) => {
  if (request.method !== 'POST' || request.url !== '/webhooks/stampgate') {
    response.writeHead(404).end();
    return;
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Uint8Array).length;
    if (size > MAX_BODY_BYTES) {
      response.writeHead(413).end();
      return;
    }
    chunks.push(chunk as Uint8Array);
  }
  try {
    const event = verifyWebhook<Record<string, unknown>>({ secret: secrets, body: Buffer.concat(chunks), headers: request.headers });
    if (!handled.has(event.id)) {
      handled.add(event.id);
      console.log(JSON.stringify({ id: event.id, payload: event.payload }));
    }
    response.writeHead(204).end();
  } catch (error) {
    if (!(error instanceof WebhookVerificationError)) throw error;
    console.error(`refused a delivery: ${error.code}`);
    response.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ detail: error.detail, code: error.code }));
  }
});
server.listen(Number(process.env.PORT ?? 4000), '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
