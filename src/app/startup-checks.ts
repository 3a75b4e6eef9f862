import type { Config, ConfigRule } from '../config/index.js';
import { CatalogueError, loadCatalogue } from '../scoring/stamps/catalogue.js';

/**
 * Checks of what a setting names on disk, given to `loadConfig` by `serve` and `worker` so that a
 * broken file is reported with every other problem of the configuration (src/config reads no
 * catalogue). The context still loads the catalogue itself, for the callers that build it directly.
 */
export const startupChecks: ConfigRule<Config>[] = [
  {
    scope: 'any',
    reads: ['stampCatalogueFile'],
    check: ({ stampCatalogueFile: file }) => {
      if (file === null) return null;
      try {
        loadCatalogue(file);
        return null;
      } catch (error) {
        if (!(error instanceof CatalogueError)) throw error;
        return (
          `STAMP_CATALOGUE_FILE=${JSON.stringify(file)} is not a usable stamp catalogue: ${error.problem}; ` +
          'for example STAMP_CATALOGUE_FILE=./stamp-catalogue.json (a copy of the shipped assets/stamp-catalogue.json, edited), or unset for the shipped one'
        );
      }
    },
  },
];
