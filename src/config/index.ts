/**
 * Environment → one validated, typed configuration object. Every variable is declared once, in
 * the file of its concern (server, database, scoring, security, staking, publicdata), and they are
 * read together here; docs/configuration.md is checked against the same list by a test,
 * so the two cannot drift. The checks across settings (a timeout longer than another, what
 * production requires) are declared in the same files as rules and run here too, so that one
 * start reports every problem of the configuration, not the first it meets.
 */

import { BadValue, type ConfigPurpose, type ConfigRule, type RuleScope, type Setting } from './parse.js';
import { type ServerConfig, serverRules, serverSettings } from './server.js';
import { type DatabaseConfig, databaseSettings } from './database.js';
import { type ScoringConfig, scoringSettings } from './scoring.js';
import { type SecurityConfig, securityRules, securitySettings } from './security.js';
import { type StakingConfig, stakingSettings } from './staking.js';
import { type PublicDataConfig, publicdataRules, publicdataSettings } from './publicdata.js';
import { type PortalConfig, portalSettings } from './portal.js';
import { type SmartWalletConfig, smartWalletSettings } from './smart-wallets.js';
import { type WebhooksConfig, webhooksSettings } from './webhooks.js';
import { type BatchConfig, batchSettings } from './batches.js';
import { type ModelsConfig, modelsSettings } from './models.js';
import { type OnchainConfig, onchainSettings } from './onchain.js';

export type { Environment } from './server.js';
export type { ConfigPurpose, ConfigRule, RuleScope } from './parse.js';
export { HOST_REQUIRED } from './server.js';

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

const rules: ConfigRule<Config>[] = [...serverRules, ...securityRules, ...publicdataRules];

/** The rule scopes a process of each purpose needs (a worker binds only to serve WORKER_PORT). */
function scopesOf(purpose: ConfigPurpose, config: Partial<Config>): RuleScope[] {
  if (purpose === 'serve') return ['any', 'api', 'bind'];
  if (purpose === 'worker') return config.workerPort === null ? ['any'] : ['any', 'bind'];
  return ['any'];
}

export class ConfigError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

/**
 * Reads every setting, then the rules of `purpose` over the settings that parsed; throws one
 * ConfigError listing every problem. By default (`command`) no rule of serving applies.
 * `checks` are rules of the layers above, which read what a setting names (a file), run here so
 * that their problems join the list rather than stopping a later step on their own.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, purpose: ConfigPurpose = 'command', checks: readonly ConfigRule<Config>[] = []): Config {
  const problems: string[] = [];
  const config: Partial<Config> = {};
  const refused = new Set<string>();
  for (const setting of Object.values(settings) as (Setting<unknown> & { key: string })[]) {
    try {
      (config as Record<string, unknown>)[setting.key] = setting.parse(env[setting.name], env);
    } catch (error) {
      if (!(error instanceof BadValue)) throw error;
      refused.add(setting.key);
      problems.push(error.message);
    }
  }
  problems.push(...ruleProblems([...rules, ...checks], config, scopesOf(purpose, config), refused));
  // A default read from another variable (SMART_WALLET_RPC_URL from ETH_RPC_URL) repeats its problem.
  if (problems.length > 0) throw new ConfigError([...new Set(problems)]);
  return config as Config;
}

/**
 * The rules of `scopes` for a configuration already loaded: what `buildServer` checks, for the
 * tools and tests that build the API from a configuration loaded without the `serve` purpose.
 */
export function checkConfig(config: Config, scopes: readonly RuleScope[]): void {
  const problems = ruleProblems(rules, config, scopes, new Set());
  if (problems.length > 0) throw new ConfigError(problems);
}

function ruleProblems(
  candidates: readonly ConfigRule<Config>[],
  config: Partial<Config>,
  scopes: readonly RuleScope[],
  refused: ReadonlySet<string>,
): string[] {
  const problems: string[] = [];
  for (const rule of candidates) {
    if (!scopes.includes(rule.scope) || rule.reads.some((key) => refused.has(key))) continue;
    const problem = rule.check(config as Config);
    if (problem !== null) problems.push(problem);
  }
  return problems;
}

/** The documented variables, concern by concern: name, default, description. */
export function describeSettings(): { name: string; defaultText: string; description: string }[] {
  return Object.values(settings).map(({ name, defaultText, description }) => ({ name, defaultText, description }));
}
