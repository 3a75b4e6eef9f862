/**
 * Finishing touches on the generated OpenAPI document that no single route schema can give:
 * an `operationId` for every operation and an explicit `security` on the public ones.
 */

const methods = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

type Operation = Record<string, unknown> & { operationId?: string; security?: unknown[] };
type PathItem = Partial<Record<(typeof methods)[number], Operation>> & Record<string, unknown>;

function capitalized(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}

/**
 * The operation id of `method path`, from those two alone so that it is the same on every run and
 * build: `GET /registry/score/{scorer_id}/{address}` is `getRegistryScoreByScorerIdByAddress`. A
 * path's trailing slash is kept as `Slash` (the public data API serves both `/grants` and `/grants/`).
 */
export function operationIdOf(method: string, path: string): string {
  const parts = path.split('/').filter(Boolean).map((segment) => {
    const parameter = /^\{(.+)\}$/.exec(segment);
    const words = (parameter ? parameter[1]! : segment).split(/[^A-Za-z0-9]+/).filter(Boolean);
    const name = words.map((word) => capitalized(word.toLowerCase())).join('');
    return parameter ? `By${name}` : name;
  });
  if (path.length > 1 && path.endsWith('/')) parts.push('Slash');
  return method.toLowerCase() + (parts.length > 0 ? parts.join('') : 'Root');
}

/**
 * Gives every operation its derived `operationId` (unless its route declared one) and states
 * `security: []` on operations that declared none: those need no credentials, and saying so
 * tells a reader (and a linter) that this was meant rather than forgotten.
 */
export function finishOperations(document: { paths?: Record<string, PathItem> }): void {
  const seen = new Map<string, string>();
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const method of methods) {
      const operation = item[method];
      if (!operation) continue;
      // One route with several methods shares a single operation object: each method gets its own copy.
      const finished: Operation = { ...operation, operationId: operation.operationId ?? operationIdOf(method, path) };
      if (finished.security === undefined) finished.security = [];
      const where = `${method.toUpperCase()} ${path}`;
      const clash = seen.get(finished.operationId!);
      if (clash) throw new Error(`OpenAPI operationId ${finished.operationId} is used by both ${clash} and ${where}`);
      seen.set(finished.operationId!, where);
      item[method] = finished;
    }
  }
}
