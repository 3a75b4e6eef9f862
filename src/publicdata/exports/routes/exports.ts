import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { typed } from '../../../http/typebox.js';
import type { PublicDataModule } from '../../publicdata.module.js';
import { AppError } from '../../../errors.js';
import { errorResponses } from '../../../http/errors.js';
import { parseAddressExportFile, parseInfoExportFile } from '../exports.service.js';
import { AddressExportSchema, ContributorInfoExportSchema, GrantsJsonSchema } from '../export.schema.js';
import { sendDocument } from '../../routes/http-cache.js';
import { readSession } from './session.js';

const CredentialsQuery = Type.Object({
  // Any text: a malformed pair is refused like a wrong one (401).
  _key: Type.Optional(Type.String({ maxLength: 200, description: 'Export credentials from meta.api_key (grant exports only).' })),
  _secret: Type.Optional(Type.String({ maxLength: 200, description: 'The secret that came with _key.' })),
});

// The file name is not echoed back.
const NO_SUCH_FILE = 'There is no such export file; the file names are listed at /docs.';

const File = (description: string) => Type.Object({ file: Type.String({ maxLength: 100, description }) });

/** Only a GET hands out the one-time secret; a HEAD (answered by the same handler) leaves it for the next GET. */
const takesSecret = (request: { method: string }) => request.method === 'GET';

/** What the export routes read. */
export interface ExportRoutesDeps {
  publicData: Pick<PublicDataModule, 'exports' | 'exportAuth' | 'cache'>;
}

/** `/grants/grants.json`, `/grants/v1/api/export_addresses/<file>` and `/grants/v1/api/export_info/<file>`. */
export function exportRoutes(instance: FastifyInstance, deps: ExportRoutesDeps): void {
  const app = typed(instance);
  const exportsOf = () => deps.publicData.exports;
  const caller = (request: { query: { _key?: string; _secret?: string } } & Parameters<typeof readSession>[0]) =>
    deps.publicData.exportAuth.identify({
      session: readSession(request),
      key: request.query._key,
      secret: request.query._secret,
    });

  app.get(
    '/grants/grants.json',
    {
      schema: {
        tags: ['public data'],
        summary: 'Active grants with the addresses that accept contributions',
        description: 'No authentication. May be up to PUBLIC_CACHE_TTL seconds stale; ETag and 304 as for every export.',
        response: { 200: GrantsJsonSchema },
      },
    },
    async (request, reply) => sendDocument(deps, request, reply, await exportsOf().grantsJson()),
  );

  app.get(
    '/grants/v1/api/export_addresses/:file',
    {
      schema: {
        tags: ['public data'],
        summary: 'Contributor addresses',
        description:
          'One route for the file names (parsed in the handler, since a path segment cannot hold two parameters): ' +
          '`all.json` (every address that ever funded a grant) and `round<n>.json` need no authentication; ' +
          '`grant<id>.json`, `grant<id>_round<n>.json` and `grant<id>_round_<n>.json` need the grant’s admin or a team member, ' +
          'logged in (/grants/login; the response then carries meta.api_key) or with `?_key=…&_secret=…`. ' +
          'Addresses are distinct, sorted, lower-case, and leave out users who opted out of exports. ' +
          'An unknown file name, round or grant is 404.',
        params: File('all.json, round<n>.json, grant<id>.json, grant<id>_round<n>.json or grant<id>_round_<n>.json'),
        querystring: CredentialsQuery,
        response: { 200: AddressExportSchema, ...errorResponses(401, 403, 404) },
      },
    },
    async (request, reply) => {
      const file = parseAddressExportFile(request.params.file);
      if (!file) throw new AppError('not_found', NO_SUCH_FILE);
      if (file.kind === 'all') return sendDocument(deps, request, reply, await exportsOf().allAddresses());
      if (file.kind === 'round') return sendDocument(deps, request, reply, await exportsOf().roundAddresses(file.round));
      const document = await exportsOf().grantAddresses(await caller(request), file.grant, file.round, takesSecret(request));
      return sendDocument(deps, request, reply, document, 'private');
    },
  );

  app.get(
    '/grants/v1/api/export_info/:file',
    {
      schema: {
        tags: ['public data'],
        summary: 'Contributor social info of a grant in a round',
        description:
          'File name `grant<id>_round<n>.json` (or `grant<id>_round_<n>.json`), parsed in the handler. ' +
          'For the grant’s admin and team members (session or `_key`/`_secret`). One entry per contribution in time order; ' +
          'an anonymized contribution shows no handle or picture.',
        params: File('grant<id>_round<n>.json or grant<id>_round_<n>.json'),
        querystring: CredentialsQuery,
        response: { 200: ContributorInfoExportSchema, ...errorResponses(401, 403, 404) },
      },
    },
    async (request, reply) => {
      const file = parseInfoExportFile(request.params.file);
      if (!file) throw new AppError('not_found', NO_SUCH_FILE);
      const document = await exportsOf().contributorInfo(await caller(request), file.grant, file.round, takesSecret(request));
      return sendDocument(deps, request, reply, document, 'private');
    },
  );
}
