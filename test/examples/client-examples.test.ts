/**
 * The examples/ scripts that use @stampgate/client, each run as its own process against a real
 * listening server, and exercised the way their users would: over HTTP.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createClient } from '@stampgate/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateWebhookSecret, signWebhook } from '../../src/webhooks/signing.js';
import { createTestApp, seedAccount, type TestApp } from '../helpers/app.js';
import { databaseKinds } from '../helpers/databases.js';
import { giveStamps, testWallet } from '../helpers/stamps.js';
import { bountyFixtures, importOk } from '../publicdata/fixtures.js';
import { freePort } from '../helpers/processes.js';
import { RunningExample } from './run-example.js';

describe.each(databaseKinds)('client examples against a listening server on %s', (kind) => {
  let t: TestApp;
  let baseUrl: string;
  let apiKey: string;
  let scorerId: string;
  const running: RunningExample[] = [];

  function start(name: string, env: Record<string, string>) {
    const example = new RunningExample(name, env);
    running.push(example);
    return example;
  }

  beforeAll(async () => {
    t = await createTestApp(kind, { SUBMIT_WAIT_MS: '0', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', BATCH_POLL_MS: '20' });
    t.ctx.worker.start();
    t.ctx.batches.worker.start();
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    const seeded = await seedAccount(t.ctx);
    apiKey = seeded.key;
    scorerId = String(seeded.scorer.id);
  });
  afterAll(async () => {
    await Promise.all(running.map((example) => example.stop()));
    await t.close();
  });

  it('gate-page: serves the members page to an address whose score reaches the threshold, 403 below it, 400 for a bad address', async () => {
    const member = testWallet(601);
    const visitor = testWallet(602);
    await giveStamps(t.ctx, member.address, ['Google', 'Discord', 'Linkedin']);
    await giveStamps(t.ctx, visitor.address, ['Google']);
    // The scorer's threshold is set to the member's score (reached exactly), above the visitor's.
    const client = createClient({ baseUrl, apiKey });
    const memberScore = (await client.score(scorerId, member.address)).score;
    const visitorScore = (await client.score(scorerId, visitor.address)).score;
    expect(Number(memberScore)).toBeGreaterThan(Number(visitorScore));
    const threshold = memberScore;
    await t.ctx.accounts.updateScorer(Number(scorerId), { threshold });

    const gate = start('client/gate-page', { BASE_URL: baseUrl, API_KEY: apiKey, SCORER_ID: scorerId, PORT: '0' });
    const [, pageUrl] = await gate.line(/^listening on (http:\/\/127\.0\.0\.1:\d+)$/);

    const welcome = await fetch(`${pageUrl}/members?address=${member.address}`);
    expect(welcome.status).toBe(200);
    expect(await welcome.text()).toContain(`Your score is ${memberScore}`);

    const refused = await fetch(`${pageUrl}/members?address=${visitor.address}`);
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain(`needs ${threshold}`);

    expect((await fetch(`${pageUrl}/members?address=0x1234`)).status).toBe(400);
  });

  it('webhook-receiver: accepts a signed delivery once (repeats ignored), refuses forged and unsigned ones', async () => {
    const secret = generateWebhookSecret();
    const receiver = start('client/webhook-receiver', { WEBHOOK_SECRET: secret, PORT: '0' });
    const [, receiverUrl] = await receiver.line(/^listening on (http:\/\/127\.0\.0\.1:\d+)$/);
    const url = `${receiverUrl}/webhooks/stampgate`;
    const body = JSON.stringify({ type: 'score.updated', event_id: '9001', address: testWallet(603).address, score: '1.00000' });
    const deliver = (headers: Record<string, string>, sent = body) =>
      fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: sent });

    const signed = signWebhook({ secret, id: '9001', body, timestamp: new Date() });
    expect((await deliver(signed)).status).toBe(204);
    expect((await deliver(signWebhook({ secret, id: '9001', body, timestamp: new Date() }))).status).toBe(204);
    const forged = await deliver(signed, body.replace('1.00000', '99.00000'));
    expect(forged.status).toBe(400);
    expect(await forged.json()).toMatchObject({ code: 'invalid_signature' });
    expect((await deliver({})).status).toBe(400);

    const printed = await receiver.line(/^\{"id":"9001"/);
    expect(JSON.parse(printed.input!)).toEqual({ id: '9001', payload: JSON.parse(body) });
    expect(receiver.stdout.filter((line) => line.startsWith('{"id":'))).toHaveLength(1);
  });

  it('the README’s first session in TypeScript runs as written and prints what it says', async () => {
    const readme = readFileSync(fileURLToPath(new URL('../../README.md', import.meta.url)), 'utf8');
    const section = readme.slice(readme.indexOf('### The same from TypeScript'));
    const code = /```ts\n([\s\S]*?)```/.exec(section)![1]!;
    const { scorer, key } = await seedAccount(t.ctx); // weighted, like the README's scorer 2
    await giveStamps(t.ctx, '0x1111111111111111111111111111111111111111', ['Google', 'Discord', 'Linkedin']);
    await importOk(t.ctx, { bounties: bountyFixtures() });
    const dir = mkdtempSync(join(tmpdir(), 'stampgate-readme-'));
    const file = join(dir, 'first-session.mts');
    writeFileSync(file, code.replaceAll('http://localhost:8000', baseUrl).replace(/\((2)([,)])/g, `(${scorer.id}$2`));
    try {
      const snippet = new RunningExample(file, { API_KEY: key });
      running.push(snippet);
      expect(await snippet.exited, snippet.stderr.join('\n')).toBe(0);
      expect(snippet.stdout[0]).toMatch(/^DONE 2\.57200 \{/);
      expect(snippet.stdout[0]).toContain("Discord: '0.51600'");
      expect(snippet.stdout[1]).toBe('0x1111111111111111111111111111111111111111 2.57200');
      // is_open: not done and not expired (bounties 4 and 5 are).
      expect(snippet.stdout.slice(2)).toEqual(['1 Alpha', '2 beta', '3 Gamma', '6 zeta']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('airdrop-batch: queues the list as a batch and writes the addresses that pass as CSV', async () => {
    const { scorer, key } = await seedAccount(t.ctx);
    const list = [testWallet(801), testWallet(802), testWallet(803), testWallet(804)].map((w) => w.address);
    await giveStamps(t.ctx, list[0]!, ['Google', 'Discord', 'Linkedin']);
    await giveStamps(t.ctx, list[2]!, ['Google', 'Discord', 'Linkedin']);
    await giveStamps(t.ctx, list[3]!, ['Google']);
    const passing = (await createClient({ baseUrl, apiKey: key }).score(scorer.id, list[0]!)).score;
    await t.ctx.accounts.updateScorer(scorer.id, { threshold: passing });
    const dir = mkdtempSync(join(tmpdir(), 'stampgate-airdrop-'));
    const file = join(dir, 'addresses.csv');
    writeFileSync(file, `address\n${list.join('\n')}\n`);
    try {
      const airdrop = new RunningExample('client/airdrop-batch', { BASE_URL: baseUrl, API_KEY: key, SCORER_ID: String(scorer.id) }, [file]);
      running.push(airdrop);
      expect(await airdrop.exited, airdrop.stderr.join('\n')).toBe(0);
      expect(airdrop.stdout).toEqual(['address,score', `${list[0]},${passing}`, `${list[2]},${passing}`]);
      expect(airdrop.stderr.at(-1)).toBe('2 of 4 addresses pass; 0 could not be scored');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('webhook-receiver: gets the service’s real delivery of a score change, signature checked', async () => {
    const { scorer, key } = await seedAccount(t.ctx);
    const client = createClient({ baseUrl, apiKey: key });
    const port = await freePort();
    const { data: webhook } = await client.api.POST('/v2/scorers/{scorer_id}/webhooks', {
      params: { path: { scorer_id: String(scorer.id) } },
      body: { url: `http://127.0.0.1:${port}/webhooks/stampgate`, events: ['score.updated'] },
    });
    expect(webhook?.secret).toMatch(/^whsec_/);
    const receiver = start('client/webhook-receiver', { WEBHOOK_SECRET: webhook!.secret, PORT: String(port) });
    await receiver.line(/^listening on /);

    const address = testWallet(805).address;
    await giveStamps(t.ctx, address, ['Google']);
    const scored = await client.score(scorer.id, address);
    await t.ctx.webhooks.worker.runOnce();
    const printed = await receiver.line(/^\{"id":/);
    const { id, payload } = JSON.parse(printed.input!) as { id: string; payload: Record<string, unknown> };
    expect(payload).toMatchObject({ type: 'score.updated', address, score: scored.score, scorer_id: scorer.id, event_id: id });
    expect(receiver.stderr.filter((line) => line.startsWith('refused'))).toEqual([]);
  });
});
