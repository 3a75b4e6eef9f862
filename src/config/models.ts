/** The Models API (`GET /v2/models/score/{address}`): the operator's model services and how long their answers are kept. */
import { BadValue, integer, type Settings } from './parse.js';

export interface ModelsConfig {
  /** Model name → URL of its model service (operator configuration, so trusted: no target guard). */
  models: Record<string, string>;
  modelCacheSeconds: number;
}

const MODELS_EXAMPLE = 'MODELS=aggregate=http://127.0.0.1:8123/score,ethereum_activity=https://models.internal/eth';

// Names travel in a comma-separated query parameter and in error sentences: keep them plain.
const MODEL_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

export function modelServices(raw: string | undefined): Record<string, string> {
  const models: Record<string, string> = Object.create(null);
  if (raw === undefined || raw.trim() === '') return models;
  for (const entry of raw.split(',').map((e) => e.trim()).filter(Boolean)) {
    const at = entry.indexOf('=');
    const name = at < 0 ? '' : entry.slice(0, at).trim();
    const target = at < 0 ? '' : entry.slice(at + 1).trim();
    if (!MODEL_NAME.test(name) || target === '') {
      throw new BadValue(`MODELS has ${JSON.stringify(entry)}, which is not name=url (names: letters, digits, _ . -); for example ${MODELS_EXAMPLE}`);
    }
    let url: URL | null;
    try {
      url = new URL(target);
    } catch {
      url = null;
    }
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.username !== '' || url.password !== '') {
      throw new BadValue(`MODELS gives model ${name} the URL ${JSON.stringify(target)}, which is not an absolute http(s) URL without credentials; for example ${MODELS_EXAMPLE}`);
    }
    if (name in models) throw new BadValue(`MODELS names model ${name} twice; for example ${MODELS_EXAMPLE}`);
    models[name] = url.toString();
  }
  return models;
}

export const modelsSettings: Settings<ModelsConfig> = {
  models: {
    key: 'models',
    name: 'MODELS',
    description:
      'Model services of `GET /v2/models/score/{address}`: comma-separated `name=url` pairs, e.g. `aggregate=http://127.0.0.1:8123/score`; each is POSTed `{"address"}` (docs/models.md). Unset: every model is unknown (404)',
    defaultText: '(none)',
    parse: modelServices,
  },
  modelCacheSeconds: {
    key: 'modelCacheSeconds',
    name: 'MODEL_CACHE_SECONDS',
    description: 'How long a model service\'s answer for an address is reused (stored in the database, shared by every process); 0 asks the model service every time',
    defaultText: '2592000 (30 days)',
    parse: integer('MODEL_CACHE_SECONDS', 0, 10 * 365 * 86_400, 30 * 86_400),
  },
};
