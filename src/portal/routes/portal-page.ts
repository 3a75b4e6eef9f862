import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { AppError } from '../../errors.js';

/**
 * The portal's page allows only this origin's own scripts, styles, images and API calls: no
 * inline script, no external origin, no framing.
 */
export const PORTAL_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const contentTypes: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json; charset=utf-8',
  '.webmanifest': 'application/manifest+json',
};

interface StaticFile {
  body: Buffer;
  type: string;
  /** Vite's `assets/` files carry a content hash in their names: cached for a year. */
  immutable: boolean;
}

/** Every file of the built front end, read once: a few dozen kilobytes. */
function loadFiles(dir: string): Map<string, StaticFile> {
  const files = new Map<string, StaticFile>();
  if (!existsSync(join(dir, 'index.html'))) return files;
  const walk = (folder: string) => {
    for (const name of readdirSync(folder)) {
      const path = join(folder, name);
      if (statSync(path).isDirectory()) walk(path);
      else {
        const rel = relative(dir, path).split(sep).join('/');
        files.set(rel, { body: readFileSync(path), type: contentTypes[extname(name)] ?? 'application/octet-stream', immutable: rel.startsWith('assets/') });
      }
    }
  };
  walk(dir);
  return files;
}

function sendFile(reply: FastifyReply, file: StaticFile) {
  reply.header('content-type', file.type).header('x-content-type-options', 'nosniff');
  reply.header('cache-control', file.immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
  return reply.send(file.body);
}

/** Serves the built portal (PORTAL_ASSETS_DIR) at `/portal`; pages are addressed by the URL fragment (`/portal/#/keys`). */
export function portalPageRoutes(app: FastifyInstance, assetsDir: string): void {
  const files = loadFiles(assetsDir);
  const page = async (_request: unknown, reply: FastifyReply) => {
    const index = files.get('index.html');
    if (!index) throw new AppError('not_ready', 'The developer portal is not built on this server: run `npm run build`.');
    reply.header('content-security-policy', PORTAL_CSP).header('x-frame-options', 'DENY').header('referrer-policy', 'same-origin');
    return sendFile(reply, index);
  };
  app.get('/portal', { schema: { hide: true } }, async (_request, reply) => reply.redirect('/portal/', 302));
  app.get('/portal/', { schema: { hide: true } }, page);
  app.get<{ Params: { '*': string } }>('/portal/*', { schema: { hide: true } }, async (request, reply) => {
    const file = files.get(request.params['*']);
    if (!file || request.params['*'] === 'index.html') throw new AppError('not_found', 'There is no such file in the portal.');
    return sendFile(reply, file);
  });
}
