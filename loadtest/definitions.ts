/**
 * What every part of the load test agrees on: where the repository and results are, the
 * configurations it can run, the shape of its settings (read from the environment in run.ts) and the
 * request mix.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoDir = fileURLToPath(new URL('..', import.meta.url));
export const resultsDir = join(repoDir, 'loadtest', 'results');

export type ConfigName = 'sqlite' | 'postgres';

export interface LoadtestSettings {
  seconds: number;
  warmupSeconds: number;
  connections: number;
  addresses: number;
  stampsPerAddress: number;
  configs: ConfigName[];
  postgresUrl: string;
  redisUrl: string;
  cpuProfile: boolean;
  batchAddresses: number;
  apiProcesses: number;
}

export const kinds = ['read', 'list', 'submit'] as const;
export type Kind = (typeof kinds)[number];
export const kindLabels: Record<Kind, string> = {
  read: 'GET score/{id}/{address}',
  list: 'GET score/{id}?limit=50',
  submit: 'POST submit-passport',
};
export const weights: [Kind, number][] = [
  ['read', 0.7],
  ['list', 0.2],
  ['submit', 0.1],
];


/** What the load generator needs to build requests against one seeded configuration. */
export interface Workload {
  scorerId: number;
  key: string;
  addresses: string[];
}
