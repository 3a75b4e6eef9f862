/**
 * Environment → one validated, typed configuration object. Every variable is declared once, in
 * the file of its concern (server, database, scoring, security, staking, publicdata), and they are
 * read together here; docs/configuration.md is checked against the same list by a test,
 * so the two cannot drift.
 */

import { BadValue, type Setting } from './parse.js';
import { type ServerConfig, serverSettings } from './server.js';
import { type DatabaseConfig, databaseSettings } from './database.js';
import { type ScoringConfig, scoringSettings } from './scoring.js';
import { type SecurityConfig, securitySettings } from './security.js';
import { type StakingConfig, stakingSettings } from './staking.js';
import { type PublicDataConfig, publicdataSettings } from './publicdata.js';
import { type PortalConfig, portalSettings } from './portal.js';
import { type SmartWalletConfig, smartWalletSettings } from './smart-wallets.js';
import { type WebhooksConfig, webhooksSettings } from './webhooks.js';
import { type BatchConfig, batchSettings } from './batches.js';
import { type ModelsConfig, modelsSettings } from './models.js';
import { type OnchainConfig, onchainSettings } from './onchain.js';

export type { Environment } from './server.js';

export type Config = ServerConfig & DatabaseConfig & ScoringConfig & SecurityConfig & StakingConfig & PublicDataConfig & SmartWalletConfig & WebhooksConfig & BatchConfig & PortalConfig & ModelsConfig & OnchainConfig;

const settings = {
  ...serverSettings,
  ...databaseSettings,
  ...scoringSettings,
  ...securitySettings,
  ...stakingSettings,
  ...publicdataSettings,
  ...smartWalletSettings,
  ...webhooksSettings,
  ...batchSettings,
  ...portalSettings,
  ...modelsSettings,
  ...onchainSettings,
};

export class ConfigError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const problems: string[] = [];
  const config: Partial<Config> = {};
  for (const setting of Object.values(settings) as (Setting<unknown> & { key: string })[]) {
    try {
      (config as Record<string, unknown>)[setting.key] = setting.parse(env[setting.name], env);
    } catch (error) {
      if (!(error instanceof BadValue)) throw error;
      problems.push(error.message);
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return config as Config;
}

/** The documented variables, concern by concern: name, default, description. */
export function describeSettings(): { name: string; defaultText: string; description: string }[] {
  return Object.values(settings).map(({ name, defaultText, description }) => ({ name, defaultText, description }));
}
