import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../../app-context.js';
import { errorResponses } from '../../../http/errors.js';

const SigningMessage = Type.Object(
  {
    message: Type.String({ description: 'Text the wallet signs (EIP-191); its last line is `Nonce: <nonce>`.' }),
    nonce: Type.String({ description: 'Random, single-use, expiring value to send back with the signature.' }),
  },
  { title: 'SigningMessage' },
);

export function signingMessageRoute(app: FastifyInstance, ctx: AppContext): void {
  app.get(
    '/registry/signing-message',
    {
      schema: {
        tags: ['scoring'],
        summary: 'A message with a fresh nonce for the wallet to sign',
        security: [{ apiKey: [] }],
        response: { 200: SigningMessage, ...errorResponses(401, 429) },
      },
    },
    async () => ctx.nonces.issue(),
  );
}
