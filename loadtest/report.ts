/**
 * The console report of a load test: the table per configuration and route kind, the CPU of each
 * measured window, the window under a batch, and the targets (reported, not enforced).
 */
import { loadavg } from 'node:os';
import { batchWindowLine } from './batch-window.js';
import type { ConfigResult } from './configuration.js';
import { kindLabels, kinds } from './definitions.js';

const READ_P99_TARGET_MS = 50;

export interface Target {
  name: string;
  verdict: string;
  measured: string;
}

function fixed(value: number, digits: number): string {
  return Number.isFinite(value) ? value.toFixed(digits) : 'n/a';
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows
    .map((r, ri) => {
      const line = r.map((cell, i) => (i < 2 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ');
      return ri === 0 ? `${line}\n${widths.map((w) => '-'.repeat(w)).join('  ')}` : line;
    })
    .join('\n');
}

export function loadText(): string {
  return loadavg().map((l) => l.toFixed(2)).join(' ');
}

/** Prints the report of `results` and returns the targets with their verdicts (for latest.json). */
export function printReport(results: ConfigResult[], loadAtStart: number[]): Target[] {
  const rows: string[][] = [['configuration', 'route', 'req/s', 'p50 ms', 'p99 ms', 'errors', '429 (intended)']];
  for (const r of results) {
    for (const [i, k] of [...kinds, 'all' as const].entries()) {
      const s = k === 'all' ? r.all : r.kinds[k];
      const errors = s.errors + (k === 'all' ? r.socketErrors + r.timeouts : 0);
      rows.push([i === 0 ? r.title : '', k === 'all' ? 'all (socket errors/timeouts included)' : kindLabels[k], fixed(s.rps, 0), fixed(s.p50, 2), fixed(s.p99, 2), String(errors), String(s.rateLimited)]);
    }
  }
  console.log('');
  console.log(table(rows));
  console.log('');
  for (const r of results) {
    console.log(
      `${r.name}: CPU during the ${fixed(r.window.seconds, 0)} s window: ` +
        `${Object.entries(r.window.serverCpuMs).map(([label, ms]) => `${label} ${ms ?? 'n/a'} ms`).join(', ')}` +
        `${r.window.postgresBackendsCpuMs !== null ? `, PostgreSQL backends ${r.window.postgresBackendsCpuMs} ms` : ''}` +
        `, load generator ${r.window.loadGeneratorCpuMs} ms; whole machine ${r.window.machineCpuBusyPercent ?? 'n/a'} % busy`,
    );
  }

  for (const r of results) if (r.withBatch) console.log(batchWindowLine(r.name, r.kinds, r.withBatch, kindLabels));

  const targets = results.flatMap((r) =>
    (['read', 'list'] as const).map((k) => ({
      name: `${r.name}: ${kindLabels[k]} p99 < ${READ_P99_TARGET_MS} ms`,
      verdict: r.kinds[k].p99 < READ_P99_TARGET_MS ? 'PASS' : 'FAIL',
      measured: `p99 ${fixed(r.kinds[k].p99, 2)} ms at ${fixed(r.kinds[k].rps, 0)} req/s`,
    })),
  );
  for (const r of results) {
    targets.push({
      name: `${r.name}: no errors other than intended 429s`,
      verdict: r.all.errors + r.socketErrors + r.timeouts === 0 ? 'PASS' : 'FAIL',
      measured: `${r.all.errors} non-2xx (not 429), ${r.socketErrors} socket errors, ${r.timeouts} timeouts`,
    });
  }
  for (const t of targets) console.log(`${t.verdict.padEnd(5)} ${t.name}: ${t.measured}`);
  console.log(`(load average at the start ${loadAtStart.map((l) => l.toFixed(2)).join(' ')}, at the end ${loadText()}; figures from a busy machine are not comparable)`);
  return targets;
}
