/**
 * Endpoint signing secrets, derived rather than stored: secret = `whsec_` + base64(HMAC-SHA256(master key,
 * "stampgate-webhook-secret/v1:<endpoint id>:<secret version>")). The database holds only the version, so a copy
 * of it (a backup, a read replica) reveals no secret; rotation bumps the version. The master key comes from
 * WEBHOOK_SECRET_KEY, or in development from `<DATA_DIR>/webhook-secret.key`, generated once like the
 * development issuer's key.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { loadOrCreateKeyFile } from '../config/key-files.js';
import { WEBHOOK_SECRET_PREFIX } from './signing.js';

export const WEBHOOK_KEY_FILE = 'webhook-secret.key';

export interface WebhookSecrets {
  /** The secret of an endpoint at one version. */
  secretOf(endpointId: number, version: number): string;
}

export function derivedWebhookSecrets(masterKey: string): WebhookSecrets {
  const key = Buffer.from(masterKey, 'utf8');
  return {
    secretOf(endpointId, version) {
      const mac = createHmac('sha256', key).update(`stampgate-webhook-secret/v1:${endpointId}:${version}`).digest();
      return WEBHOOK_SECRET_PREFIX + mac.toString('base64');
    },
  };
}


function parseKey(contents: string, path: string): string {
  const key = contents.trim();
  if (key.length < 32) throw new Error(`${path} does not hold a webhook master key of at least 32 characters`);
  return key;
}

/** The development master key from `<dir>/webhook-secret.key`, created (mode 0600) on first use. */
export async function loadOrCreateWebhookKey(dir: string): Promise<string> {
  return loadOrCreateKeyFile(dir, WEBHOOK_KEY_FILE, { generate: () => randomBytes(32).toString('base64'), parse: parseKey });
}
