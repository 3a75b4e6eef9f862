import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { typed } from '../../../http/typebox.js';
import { AppError } from '../../../errors.js';
import { errorResponses } from '../../../http/errors.js';
import { ICONS_PATH, type IconFile } from '../icons.js';

/** Icon files are renamed, not edited in place, when their artwork changes; a month is safe. */
const CACHE_CONTROL = 'public, max-age=2592000';

/**
 * `GET /static/icons/{file}`: the catalogue icons shipped with the product, from memory. No API
 * key: wallets and dashboards load them as `<img src>`.
 */
export function iconRoutes(instance: FastifyInstance, files: ReadonlyMap<string, IconFile>): void {
  const app = typed(instance);
  app.get(
    `${ICONS_PATH}/:file`,
    {
      schema: {
        tags: ['scoring'],
        summary: 'A platform icon of the stamp catalogue',
        description:
          'The files the catalogue’s `icon` URLs point to when ICON_BASE_URL is not set. Cached for 30 days; ' +
          'answers If-None-Match with 304. An unknown file is a 404.',
        security: [],
        params: Type.Object({ file: Type.String({ maxLength: 200, description: 'File name, e.g. googleStampIcon.svg.' }) }),
        response: {
          200: {
            description: 'The icon (SVG, or PNG/WebP for operator-supplied files).',
            content: { 'image/svg+xml': { schema: { type: 'string' } } },
          },
          ...errorResponses(404),
        },
      },
    },
    async (request, reply) => {
      // Only names of files read at start-up match: nothing in the path reaches the file system.
      const file = files.get(request.params.file);
      if (file === undefined) throw new AppError('not_found', `There is no icon ${JSON.stringify(request.params.file.slice(0, 100))}.`);
      reply
        .header('cache-control', CACHE_CONTROL)
        .header('etag', file.etag)
        .header('x-content-type-options', 'nosniff')
        // An SVG opened directly must not run script or load anything.
        .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; sandbox");
      // 304 is not a documented response of the schema: the untyped reply sends it.
      if (request.headers['if-none-match'] === file.etag) return (reply as FastifyReply).code(304).send();
      return reply.type(file.contentType).send(file.body);
    },
  );
}
