import type { Config } from '../config/index.js';
import type { Database } from '../db/connection.js';
import { callModelService } from './model-client.js';
import { modelsRepository } from './models.repository.js';
import { type ModelsService, modelsService } from './models.service.js';

export type ModelsModuleConfig = Pick<Config, 'models' | 'modelCacheSeconds' | 'outboundTimeoutMs'>;

/** The Models API's service, from its settings and the database holding its cache. */
export function createModelsModule(deps: { config: ModelsModuleConfig; database: Pick<Database, 'db'> }): ModelsService {
  const { config } = deps;
  return modelsService({
    models: config.models,
    cacheSeconds: config.modelCacheSeconds,
    cache: modelsRepository(deps.database.db),
    call: (url, address) => callModelService(url, address, { timeoutMs: config.outboundTimeoutMs }),
  });
}
