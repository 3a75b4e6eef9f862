/**
 * The request counter and latency histogram (src/http/request-metrics.ts) against prom-client's own
 * Counter and Histogram given the same requests: the scrape text and the JSON must be identical, so
 * dashboards and alerts written for the earlier metrics keep working (and an upgrade of prom-client
 * that changes either is caught here).
 */
import { describe, expect, it } from 'vitest';
import { Counter, Histogram, Registry } from 'prom-client';
import { RequestMetrics } from '../../src/http/request-metrics.js';

const names = {
  requests: { name: 'test_http_requests_total', help: 'HTTP requests by route, method and status.' },
  latency: { name: 'test_http_request_duration_seconds', help: 'HTTP request latency.', buckets: [0.001, 0.01, 0.1, 1] },
};

// Values on, between and beyond the bounds, over several series (one route answered twice with different statuses).
const requests: [string, string, number, number][] = [
  ['/registry/score/:scorer_id/:address', 'GET', 200, 0.0004],
  ['/registry/score/:scorer_id/:address', 'GET', 200, 0.001],
  ['/registry/score/:scorer_id/:address', 'GET', 200, 0.0015],
  ['/registry/score/:scorer_id/:address', 'GET', 400, 0.05],
  ['/registry/submit-passport', 'POST', 200, 0.1],
  ['/registry/submit-passport', 'POST', 200, 3.5],
  ['unmatched', 'GET', 404, 1],
];

function reference() {
  const registry = new Registry();
  const counter = new Counter({ ...names.requests, labelNames: ['route', 'method', 'status'] as const, registers: [registry] });
  const histogram = new Histogram({ ...names.latency, labelNames: ['route', 'method', 'status'] as const, registers: [registry] });
  for (const [route, method, status, seconds] of requests) {
    const labels = { route, method, status: String(status) };
    counter.inc(labels);
    histogram.observe(labels, seconds);
  }
  return registry;
}

function ours() {
  const registry = new Registry();
  const metrics = new RequestMetrics(registry, names);
  for (const [route, method, status, seconds] of requests) metrics.record(route, method, status, seconds);
  return registry;
}

describe('request metrics', () => {
  it('scrape the same text as prom-client given the same requests', async () => {
    const expected = await reference().metrics();
    expect(expected).toContain('le="0.001"');
    expect(await ours().metrics()).toBe(expected);
  });

  it('give the same JSON as prom-client', async () => {
    expect(await ours().getMetricsAsJSON()).toEqual(await reference().getMetricsAsJSON());
  });

  it('keep counting across scrapes, and start again from nothing after a reset', async () => {
    const registry = new Registry();
    const metrics = new RequestMetrics(registry, names);
    metrics.record('/a', 'GET', 200, 0.002);
    await registry.metrics();
    metrics.record('/a', 'GET', 200, 0.5);
    const text = await registry.metrics();
    expect(text).toContain('test_http_requests_total{route="/a",method="GET",status="200"} 2');
    expect(text).toContain('test_http_request_duration_seconds_bucket{le="0.01",route="/a",method="GET",status="200"} 1');
    expect(text).toContain('test_http_request_duration_seconds_bucket{le="1",route="/a",method="GET",status="200"} 2');
    expect(text).toContain('test_http_request_duration_seconds_sum{route="/a",method="GET",status="200"} 0.502');
    registry.resetMetrics();
    const after = await registry.metrics();
    expect(after).not.toContain('route="/a"');
  });
});
