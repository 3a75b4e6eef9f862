import { readFileSync } from 'node:fs';

// src/ and dist/ are both one level below the package root.
const packageJson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };

export const packageVersion: string = packageJson.version;
