import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/index.js';

describe('MODELS setting', () => {
  it('reads name=url pairs and defaults the cache to 30 days', () => {
    const config = loadConfig({ MODELS: 'aggregate=http://127.0.0.1:8123/score, eth=https://m.example/e?x=1' });
    expect(config.models).toEqual({ aggregate: 'http://127.0.0.1:8123/score', eth: 'https://m.example/e?x=1' });
    expect(config.modelCacheSeconds).toBe(30 * 86_400);
    expect(loadConfig({}).models).toEqual({});
  });

  it.each(['aggregate', 'aggregate=ftp://x/', 'bad name=http://x/', 'a=http://x/,a=http://y/'])('refuses %j naming MODELS with an example', (value) => {
    let error: unknown;
    try {
      loadConfig({ MODELS: value });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems[0]).toMatch(/^MODELS .*for example MODELS=aggregate=http/);
  });
});
