import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { NonceService } from '../nonces.service.js';
import { AppError } from '../../../errors.js';
import { errorResponses } from '../../../http/errors.js';

const SigningMessage = Type.Object(
  {
    message: Type.String({ description: 'Text the wallet signs (EIP-191); its last line is `Nonce: <nonce>`.' }),
    nonce: Type.String({ description: 'Random, single-use, expiring value to send back with the signature.' }),
  },
  { title: 'SigningMessage' },
);

/** What these routes use. */
export interface SigningMessageRouteDeps {
  nonces: Pick<NonceService, 'issue'>;
}

export function signingMessageRoute(app: FastifyInstance, deps: SigningMessageRouteDeps): void {
  app.get(
    '/registry/signing-message',
    {
      // It stores a nonce: a portal cookie needs its CSRF token here.
      config: { changesState: true },
      schema: {
        tags: ['scoring'],
        summary: 'A message with a fresh nonce for the wallet to sign',
        description: 'The nonce belongs to the account of the API key that asked for it: only a submission with a key of that account can use it.',
        security: [{ apiKey: [] }],
        response: { 200: SigningMessage, ...errorResponses(401, 403, 429) },
      },
    },
    async (request) => {
      if (!request.caller) throw new AppError('missing_api_key', 'Send your API key in the X-API-KEY header.');
      return deps.nonces.issue(request.caller.accountId);
    },
  );
}
