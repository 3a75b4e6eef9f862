/**
 * The Models API's domain: which models a request names, and for each one its cached answer for the
 * address or a fresh one from its model service. No HTTP and no SQL here: the call and the cache come in.
 *
 * - The `model` parameter is a comma-separated list; blanks are dropped and repeats answered once, in the
 *   order first given. No name → 400; a name the operator did not configure → 404 `model_not_found`.
 * - Answers are cached per (model, address) for `cacheSeconds` (0: never cached). Models missing from
 *   the cache are fetched at the same time; if any of them fails (down, slow, garbage) the whole request
 *   is 502 `upstream_unavailable` naming that model, and only the failed model's answer is missing from
 *   the cache: the others that did answer are kept, so a retry asks only the failing service again.
 * - Within one process, simultaneous requests for the same (model, address) share one call.
 */
import { AppError } from '../errors.js';
import type { ModelCallOutcome } from './model-client.js';
import { type ModelFields, readModelAnswer } from './model-answer.js';
import type { ModelScoreResponse } from './models.schema.js';

export interface ModelAnswerCache {
  fresh(models: readonly string[], address: string, now: number): Promise<{ model: string; answer: string }[]>;
  put(entry: { model: string; address: string; answer: string; fetchedAt: number; expiresAt: number }): Promise<void>;
}

export interface ModelsServiceDeps {
  /** Name → URL of each configured model service. */
  models: Readonly<Record<string, string>>;
  cacheSeconds: number;
  cache: ModelAnswerCache;
  call: (url: string, address: string) => Promise<ModelCallOutcome>;
  now?: () => number;
}

export interface ModelsService {
  /** `address` lower-case already; `modelList` the raw `model` parameter. */
  score(address: string, modelList: string): Promise<ModelScoreResponse>;
}

// Names echoed into error sentences are cut, so that a long query cannot make a long error.
function quoted(name: string): string {
  return JSON.stringify(name.length > 64 ? `${name.slice(0, 64)}…` : name);
}

type Fetched = { model: string; ok: true; fields: ModelFields } | { model: string; ok: false; reason: string };

export function modelsService(deps: ModelsServiceDeps): ModelsService {
  const now = deps.now ?? Date.now;
  const known = new Map(Object.entries(deps.models));
  const inFlight = new Map<string, Promise<Fetched>>();

  async function fetchAndKeep(model: string, url: string, address: string): Promise<Fetched> {
    const outcome = await deps.call(url, address);
    if (!outcome.ok) return { model, ok: false, reason: outcome.reason };
    const read = readModelAnswer(outcome.body);
    if (!read.ok) return { model, ok: false, reason: read.reason };
    if (deps.cacheSeconds > 0) {
      const fetchedAt = now();
      await deps.cache.put({ model, address, answer: JSON.stringify(read.fields), fetchedAt, expiresAt: fetchedAt + deps.cacheSeconds * 1000 });
    }
    return { model, ok: true, fields: read.fields };
  }

  function fetchShared(model: string, url: string, address: string): Promise<Fetched> {
    const key = `${model}\n${address}`;
    const pending = inFlight.get(key);
    if (pending) return pending;
    const started = fetchAndKeep(model, url, address).finally(() => inFlight.delete(key));
    inFlight.set(key, started);
    return started;
  }

  return {
    async score(address, modelList) {
      const names = [...new Set(modelList.split(',').map((name) => name.trim()).filter(Boolean))];
      if (names.length === 0) throw new AppError('invalid_request', 'model must name at least one model, e.g. model=aggregate.');
      const unknown = names.find((name) => !known.has(name));
      if (unknown !== undefined) {
        const offered = [...known.keys()];
        const choice = offered.length > 0 ? `The models here are: ${offered.join(', ')}.` : 'No models are configured on this server.';
        throw new AppError('model_not_found', `There is no model ${quoted(unknown)}. ${choice}`);
      }

      const answers = new Map<string, ModelFields>();
      if (deps.cacheSeconds > 0) {
        for (const cached of await deps.cache.fresh(names, address, now())) {
          answers.set(cached.model, JSON.parse(cached.answer) as ModelFields);
        }
      }
      const missing = names.filter((name) => !answers.has(name));
      const fetched = await Promise.all(missing.map((name) => fetchShared(name, known.get(name)!, address)));
      const failed = fetched.find((result) => !result.ok);
      if (failed && !failed.ok) {
        throw new AppError('upstream_unavailable', `Model ${quoted(failed.model)} is unavailable at the moment (${failed.reason}); try again later.`);
      }
      for (const result of fetched) if (result.ok) answers.set(result.model, result.fields);

      // fromEntries defines each key as data, so no model name can reach an object's prototype.
      const models = Object.fromEntries(names.map((name) => [name, answers.get(name)!]));
      return { address, details: { models } };
    },
  };
}
