/**
 * Bad-input and abuse tests, driven by the running app's own OpenAPI document so that every
 * documented operation is covered, including ones added later. For each operation a valid
 * baseline request is built (path and required query parameters, body, and whatever
 * authentication the route turns out to need), then one input at a time is replaced by values
 * from fixed tables of nasty inputs and by fast-check arbitraries. Every refused request must be
 * a 4xx with exactly `{"detail","code"}`, nothing internal in it, and must leave every table of
 * the database as it was; nothing may answer 500 or hang.
 *
 * The parts: abuse/abuse-run.ts (the app, credentials, the checks on every answer),
 * abuse/baselines.ts, abuse/input-cases.ts, abuse/abuse-operation.ts; helpers in
 * test/helpers/abuse/. Signatures, sessions and export credentials: abuse-credentials.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HTTP_METHODS, listOperations, type OpenApiDocument, servedRoutes } from '../helpers/abuse/openapi.js';
import { databaseKinds } from '../helpers/databases.js';
import { abuseOperation } from './abuse/abuse-operation.js';
import { AbuseRun, itSpentNoMoreThanTheCpuBudget, readDocumentedOperations } from './abuse/abuse-run.js';
import { baselineFor, requestFrom } from './abuse/baselines.js';

// Server-side routes that are not part of the API document on purpose.
// The developer portal's page and its files (/portal) are the web UI, not API operations.
const UNDOCUMENTED = [/^\/$/, /^\/docs(\/|$)/, /^\/openapi\.json$/, /^\/metrics$/, /^\/portal(\/|$)/];

const documented = await readDocumentedOperations();

describe.each(databaseKinds)('abuse of every documented operation on %s', (kind) => {
  const run = new AbuseRun(kind);

  beforeAll(async () => run.setUp(), 120_000);
  afterAll(async () => run.close());

  it('documents every served route, and covers every operation the document lists', async () => {
    const doc = (await run.app.inject('/openapi.json')).json() as OpenApiDocument;
    const operations = listOperations(doc);
    expect(operations.length).toBeGreaterThan(0);
    expect(operations.map((o) => o.id).sort()).toEqual(documented.operations.map((o) => o.id).sort());
    const ids = new Set(operations.map((o) => o.id));
    const undocumented = servedRoutes(run.app)
      .filter((r) => !UNDOCUMENTED.some((pattern) => pattern.test(r.path)))
      .flatMap((r) => r.methods.filter((m) => HTTP_METHODS.includes(m as never)).map((m) => r.paths.map((path) => `${m} ${path}`)))
      // A shared parameter node is read as any of its names: one of the readings must be documented.
      .filter((readings) => !readings.some((id) => ids.has(id)))
      .map((readings) => readings.join(' or '));
    expect(undocumented).toEqual([]);
  }, 120_000);

  for (const op of documented.operations) {
    it(`${op.id} refuses bad input with the standard error and an unchanged database`, async () => {
      const [before, started] = [run.requests, Date.now()];
      await abuseOperation(run, op);
      if (process.env.ABUSE_STATS) console.log(`${kind} ${op.id}: ${run.requests - before} requests in ${Date.now() - started} ms`);
    }, 180_000);
  }

  it('answers methods a path does not have with the standard 404/405', async () => {
    const paths = [...new Set(documented.operations.map((o) => o.path))];
    for (const path of paths) {
      const op = documented.operations.find((o) => o.path === path)!;
      const b = await baselineFor(run, op, 'apiKey');
      const have = documented.operations.filter((o) => o.path === path).map((o) => o.method);
      for (const method of HTTP_METHODS.filter((m) => !have.includes(m))) {
        const request = await requestFrom(run, { ...b, op: { ...op, method } });
        await run.exercise(null, request, { refuse: true, status: [404, 405], echoed: [request.url] });
      }
    }
  }, 120_000);

  // Runs last: every request above was timed.
  itSpentNoMoreThanTheCpuBudget(kind, run, 1000);
});
