/**
 * Catalogue icons: the files shipped under assets/icons/ (served at /static/icons/<file>), and the
 * rule that turns a catalogue's icon paths into the absolute URLs every response carries:
 *
 *   - an icon that is already an absolute http(s) URL is kept as it is;
 *   - with ICON_BASE_URL set (a CDN), `<ICON_BASE_URL>/<icon>`;
 *   - otherwise this server's own copy, `<PUBLIC_BASE_URL>/static/icons/<icon>`, or in development
 *     without PUBLIC_BASE_URL the request's origin, as the stamps page links are built.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Catalogue, PlatformSummary, ProviderMetadata, StampMetadataPlatform } from './catalogue.js';

/** src/scoring/stamps/ and dist/scoring/stamps/ are both three levels below the repository root. */
export const SHIPPED_ICONS_DIR = fileURLToPath(new URL('../../../assets/icons/', import.meta.url));
export const ICONS_PATH = '/static/icons';

const contentTypes: Record<string, string> = {
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.webp': 'image/webp',
};

export interface IconFile {
  body: Buffer;
  contentType: string;
  etag: string;
}

/**
 * Every icon file of the directory, read once into memory: a request names a key of this map
 * and nothing else, so no path it sends can reach the file system.
 */
export function loadIconFiles(dir: string = SHIPPED_ICONS_DIR): ReadonlyMap<string, IconFile> {
  const files = new Map<string, IconFile>();
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const extension = /\.[a-z]+$/.exec(entry.name)?.[0] ?? '';
    const contentType = contentTypes[extension];
    if (!entry.isFile() || contentType === undefined) continue;
    const body = readFileSync(join(dir, entry.name));
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
    files.set(entry.name, { body, contentType, etag });
  }
  return files;
}

export interface RenderedCatalogue {
  readonly platforms: readonly StampMetadataPlatform[];
  metadataFor(provider: string): ProviderMetadata | null;
}

/** The catalogue with absolute icon URLs under `iconBase` (a directory URL without trailing slash). */
function renderCatalogue(catalogue: Catalogue, iconBase: string): RenderedCatalogue {
  const url = (icon: string) =>
    /^https?:\/\//i.test(icon) ? icon : `${iconBase}/${icon.replace(/^\/+/, '').split('/').map(encodeURIComponent).join('/')}`;
  const summaries = new Map<string, PlatformSummary>();
  const platforms = catalogue.platforms.map((platform) => Object.freeze({ ...platform, icon: url(platform.icon) }));
  const metadata = new Map<string, ProviderMetadata | null>();
  return Object.freeze({
    platforms: Object.freeze(platforms),
    metadataFor(provider: string): ProviderMetadata | null {
      if (metadata.has(provider)) return metadata.get(provider) ?? null;
      const entry = catalogue.metadataFor(provider);
      let rendered: ProviderMetadata | null = null;
      if (entry !== null) {
        let summary = summaries.get(entry.platform.id);
        if (summary === undefined) {
          summary = Object.freeze({ ...entry.platform, icon: url(entry.platform.icon) });
          summaries.set(entry.platform.id, summary);
        }
        rendered = Object.freeze({ ...entry, platform: summary });
        // Only known providers are remembered, so unknown names sent by clients cannot grow the map.
        metadata.set(provider, rendered);
      }
      return rendered;
    },
  });
}

// In development without PUBLIC_BASE_URL each request origin gets its own rendering; a few are kept.
const MAX_ORIGINS = 8;

/**
 * Renders the catalogue for a request. With ICON_BASE_URL or PUBLIC_BASE_URL the base is fixed
 * and the rendering is made once; otherwise it follows the request's origin.
 */
export function catalogueIcons(catalogue: Catalogue, settings: { iconBaseUrl: string | null; publicBaseUrl: string | null }) {
  const fixedBase = settings.iconBaseUrl ?? (settings.publicBaseUrl === null ? null : `${settings.publicBaseUrl}${ICONS_PATH}`);
  const fixed = fixedBase === null ? null : renderCatalogue(catalogue, fixedBase);
  const byOrigin = new Map<string, RenderedCatalogue>();
  return {
    /** `origin`: the request's `protocol://host`, used only when no base is configured. */
    forOrigin(origin: string): RenderedCatalogue {
      if (fixed !== null) return fixed;
      let rendered = byOrigin.get(origin);
      if (rendered === undefined) {
        if (byOrigin.size >= MAX_ORIGINS) byOrigin.clear();
        rendered = renderCatalogue(catalogue, `${origin}${ICONS_PATH}`);
        byOrigin.set(origin, rendered);
      }
      return rendered;
    },
  };
}

export type CatalogueIcons = ReturnType<typeof catalogueIcons>;
