/**
 * Draws assets/icons/<icon> for every platform of the shipped catalogue: a rounded square in a
 * colour derived from the platform id, with the platform's initials. The product's own simple
 * artwork (no third-party logos), so it can ship with the service, which serves it under
 * /static/icons/. Deterministic: a rebuild from an unchanged catalogue produces no diff.
 *
 *   npx tsx scripts/build-icons.ts [catalogue.json] [output directory]
 */
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadCatalogue } from '../src/scoring/catalogue.js';

const repoRoot = new URL('..', import.meta.url);
const cataloguePath = process.argv[2] ?? fileURLToPath(new URL('assets/stamp-catalogue.json', repoRoot));
const outputDir = process.argv[3] ?? fileURLToPath(new URL('assets/icons/', repoRoot));

/** Up to three letters: the capitals and digits of the name, else its first two letters. */
export function initials(name: string): string {
  const words = name.split(/[\s.\-_]+/).filter(Boolean);
  const fromWords = words.length > 1 ? words.map((w) => w[0] ?? '').join('') : '';
  const capitals = name.replace(/[^A-Z0-9]/g, '');
  const letters = fromWords.length >= 2 ? fromWords : capitals.length >= 2 ? capitals : name.replace(/[^A-Za-z0-9]/g, '').slice(0, 2);
  return letters.slice(0, 3).toUpperCase();
}

/** A mid-dark colour (white text stays readable) whose hue comes from the platform id; hex, which every renderer reads. */
function colourOf(id: string): string {
  const hue = createHash('sha256').update(id).digest().readUInt16BE(0) % 360;
  const [s, l] = [0.55, 0.38];
  const a = s * Math.min(l, 1 - l);
  const channel = (n: number) => {
    const k = (n + hue / 30) % 12;
    const value = l - a * Math.max(-1, Math.min(k - 3, 9 - k, 1));
    return Math.round(value * 255).toString(16).padStart(2, '0');
  };
  return `#${channel(0)}${channel(8)}${channel(4)}`;
}

function svg(name: string, id: string): string {
  const text = initials(name);
  const size = text.length >= 3 ? 22 : 28;
  const escaped = text.replace(/&/g, '&amp;').replace(/</g, '&lt;');
  return [
    '<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64" viewBox="0 0 64 64" role="img">',
    `  <title>${name.replace(/&/g, '&amp;').replace(/</g, '&lt;')}</title>`,
    `  <rect x="2" y="2" width="60" height="60" rx="14" fill="${colourOf(id)}"/>`,
    `  <text x="32" y="32" dy="0.35em" text-anchor="middle" font-family="Helvetica, Arial, sans-serif" font-size="${size}" font-weight="700" fill="#ffffff">${escaped}</text>`,
    '</svg>',
    '',
  ].join('\n');
}

const catalogue = loadCatalogue(cataloguePath);
mkdirSync(outputDir, { recursive: true });
const drawn = new Set<string>();
for (const platform of catalogue.platforms) {
  // Two platforms may share an icon file; the first one draws it.
  if (drawn.has(platform.icon)) continue;
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*\.svg$/.test(platform.icon)) throw new Error(`platform ${platform.id}: icon ${platform.icon} is not a plain .svg file name`);
  writeFileSync(join(outputDir, platform.icon), svg(platform.name, platform.id));
  drawn.add(platform.icon);
}
console.log(`${drawn.size} icons in ${outputDir}`);
