import { negotiate } from '@fastify/accept-negotiator';
import type { FastifyInstance } from 'fastify';

export interface LandingSettings {
  /** Whether the developer portal is served (the scoring API is enabled). */
  portal: boolean;
}

interface Link {
  href: string;
  title: string;
  about: string;
}

function linksOf(settings: LandingSettings): Link[] {
  return [
    { href: '/docs', title: 'API documentation', about: 'every route, with its inputs and answers (OpenAPI: /openapi.json)' },
    ...(settings.portal ? [{ href: '/portal/', title: 'Developer portal', about: 'scorers, API keys, webhooks and usage, after signing in with a wallet' }] : []),
    { href: '/health/ready', title: 'Health', about: 'whether this server is ready to serve (liveness: /health/live)' },
  ];
}

const escapeHtml = (text: string) => text.replace(/[&<>"]/g, (c) => `&${({ '&': 'amp', '<': 'lt', '>': 'gt', '"': 'quot' })[c]};`);

function page(links: Link[]): string {
  const items = links.map((l) => `<li><a href="${escapeHtml(l.href)}">${escapeHtml(l.title)}</a>: ${escapeHtml(l.about)}</li>`).join('\n');
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Stampgate</title></head>
<body style="font: 16px/1.5 system-ui, sans-serif; max-width: 40rem; margin: 2rem auto; padding: 0 1rem">
<h1>Stampgate</h1>
<p>A passport scoring service and public data API. This address is its API; start here:</p>
<ul>
${items}
</ul>
</body>
</html>
`;
}

/**
 * `/`: a browser (Accept preferring text/html) gets a small page linking the documentation, the
 * portal and the health check; any other client gets the same links as JSON.
 */
export function registerLandingPage(app: FastifyInstance, settings: LandingSettings): void {
  const links = linksOf(settings);
  const html = page(links);
  app.get('/', { schema: { hide: true } }, async (request, reply) => {
    reply.header('vary', 'Accept');
    const wanted = negotiate(request.headers.accept ?? 'application/json', ['application/json', 'text/html']);
    if (wanted === 'text/html') {
      return reply
        .type('text/html; charset=utf-8')
        .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; frame-ancestors 'none'")
        .send(html);
    }
    return { service: 'stampgate', links: links.map(({ href, title }) => ({ href, title })) };
  });
}
