/**
 * `@stampgate/client`: a typed client for a Stampgate service (passport scoring and public data).
 *
 * Types are generated from the service's OpenAPI document when the package is built; requests use
 * only `fetch`, so it runs on Node ≥ 20, Deno, Bun, workers and browsers.
 *
 * @packageDocumentation
 */
export { createClient, type ClientOptions, type StampgateClient } from './client.js';
export type { CallOptions, SubmitOptions } from './calls.js';
export type { SubmitAndWaitOptions } from './submit-and-wait.js';
export type { PageOptions } from './paging.js';
export type { EventOptions } from './v2.js';
export { StampgateError, ClientErrorCode, type StampgateErrorInit, parseRetryAfter } from './errors.js';
export type { Clock, FetchFunction, RetryOptions } from './transport.js';
export { verifyWebhook, WebhookVerificationError, type VerifyWebhookInput, type WebhookHeaders, type VerifiedWebhook } from './webhooks.js';
export type * from './types.js';
export {
  verifyScoreAttestation,
  readOnchainScore,
  offchainAttestationUid,
  AttestationVerificationError,
  SCORE_SCHEMA,
  PASSPORT_SCHEMA,
  VERIFIER_EIP712,
  type OffchainScoreAttestation,
  type TrustedSigner,
  type VerifiedScore,
  type OnchainScore,
} from './onchain.js';
