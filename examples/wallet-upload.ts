/**
 * A wallet brings its own stamps to Stampgate, then an integrator scores it:
 *
 *   1. sign in with Ethereum (EIP-4361) using the wallet's key → a session token
 *   2. upload stamp credentials with that token (no API key)
 *   3. with an API key: submit the passport for scoring and read the stamps back
 *
 * Usage:
 *   npx tsx examples/wallet-upload.ts [credential.json …]
 *
 * Environment:
 *   BASE_URL            the Stampgate server (default http://localhost:8000)
 *   WALLET_PRIVATE_KEY  the wallet's 0x-hex key (default: a fresh random key, printed)
 *   API_KEY             an integrator API key, for step 3 (skipped without one)
 *   SCORER_ID           scorer to submit to (default 1, the demo scorer)
 *
 * Each file holds one credential, an array of them, or {"credentials": [...]}, e.g. made with
 *   npx stampgate credentials issue --address <wallet address> --provider Google > google.json
 */
import { readFileSync } from 'node:fs';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createSiweMessage } from 'viem/siwe';

const baseUrl = (process.env.BASE_URL ?? 'http://localhost:8000').replace(/\/+$/, '');
const apiKey = process.env.API_KEY;
const scorerId = process.env.SCORER_ID ?? '1';
const files = process.argv.slice(2);

type Json = Record<string, any>;

async function call(method: string, path: string, options: { body?: unknown; token?: string; apiKey?: string } = {}): Promise<Json> {
  const headers: Record<string, string> = {};
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.apiKey) headers['x-api-key'] = options.apiKey;
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const text = await response.text();
  const body = text ? (JSON.parse(text) as Json) : {};
  if (!response.ok) {
    console.error(`\n${method} ${path} → ${response.status} ${body.code ?? ''}: ${body.detail ?? text}`);
    process.exit(1);
  }
  return body;
}

function credentialsIn(file: string): unknown[] {
  const document = JSON.parse(readFileSync(file, 'utf8')) as unknown;
  if (Array.isArray(document)) return document;
  if (document && typeof document === 'object' && Array.isArray((document as Json).credentials)) return (document as Json).credentials;
  return [document];
}

// The wallet.
const givenKey = process.env.WALLET_PRIVATE_KEY as `0x${string}` | undefined;
const privateKey = givenKey ?? generatePrivateKey();
const account = privateKeyToAccount(privateKey);
const address = account.address.toLowerCase();
console.log(`Wallet ${address}`);
if (!givenKey) console.log(`  new key: WALLET_PRIVATE_KEY=${privateKey}  (export it to use this wallet again)`);

// 1. Sign in with Ethereum.
const offer = await call('GET', '/registry/wallet/siwe-nonce');
const message = createSiweMessage({
  address: account.address,
  domain: offer.domain,
  uri: offer.uri,
  chainId: offer.chainId,
  statement: offer.statement,
  nonce: offer.nonce,
  version: '1',
  issuedAt: new Date(),
  expirationTime: new Date(offer.expiresAt),
});
console.log(`\n1. Signing in. The wallet signs:\n${message.replace(/^/gm, '   | ')}`);
const signature = await account.signMessage({ message });
const session = await call('POST', '/registry/wallet/session', { body: { message, signature } });
console.log(`   → session token ${session.token.slice(0, 8)}… for ${session.address}, valid until ${session.expiresAt}`);

if (files.length === 0) {
  console.log(
    `\nNo credential files given. Issue development stamps for this wallet and run again with them:\n` +
      `  npx stampgate credentials issue --address ${address} --provider Google > google.json\n` +
      `  npx stampgate credentials issue --address ${address} --provider Discord > discord.json\n` +
      `  WALLET_PRIVATE_KEY=${privateKey} npx tsx examples/wallet-upload.ts google.json discord.json`,
  );
  process.exit(0);
}

// 2. Upload the credentials, at most 100 per request.
const credentials = files.flatMap(credentialsIn);
console.log(`\n2. Uploading ${credentials.length} credential(s) from ${files.join(', ')}`);
for (let start = 0; start < credentials.length; start += 100) {
  const report = await call('POST', '/registry/wallet/stamps', { token: session.token, body: { credentials: credentials.slice(start, start + 100) } });
  for (const result of report.results) {
    const what = result.provider ?? 'credential';
    console.log(`   [${start + result.index}] ${what}: ${result.status}${result.reason ? ` (${result.reason})` : ''}`);
  }
}
const mine = await call('GET', '/registry/wallet/stamps', { token: session.token });
console.log(`   The wallet's live stamps: ${mine.items.map((item: Json) => item.provider).join(', ') || '(none)'}`);

// 3. What an integrator sees.
if (!apiKey) {
  console.log('\n3. Set API_KEY (and SCORER_ID) to submit the passport and read its stamps with an integrator key.');
  process.exit(0);
}
console.log(`\n3. Submitting ${address} to scorer ${scorerId}`);
let score = await call('POST', '/registry/submit-passport', { apiKey, body: { address, scorer_id: scorerId } });
for (let attempt = 0; score.status === 'PROCESSING' && attempt < 20; attempt++) {
  await new Promise((resolve) => setTimeout(resolve, 500));
  score = (await call('GET', `/registry/score/${scorerId}/${address}`, { apiKey })).items[0];
}
console.log(`   → ${JSON.stringify(score)}`);

const page = await call('GET', `/registry/stamps/${address}?include_metadata=true`, { apiKey });
console.log(`   GET /registry/stamps/${address}?include_metadata=true → ${page.items.length} stamp(s):`);
for (const item of page.items) {
  const metadata = item.metadata ? `${item.metadata.name}: ${item.metadata.description} (platform ${item.metadata.platform.name})` : 'no catalogue entry';
  console.log(`   - ${item.credential.credentialSubject.provider}, expires ${item.credential.expirationDate} — ${metadata}`);
}
