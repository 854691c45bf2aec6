import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, publicBaseUrl } from '../src/config.js';

const HEX_KEY = 'ab'.repeat(32);

function failure(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error(`expected ${JSON.stringify(env)} to be refused`);
}

describe('configuration', () => {
  it('starts from documented defaults on an empty environment', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      PORT: 3000,
      HOST: '127.0.0.1',
      TRUST_PROXY: false,
      DATA_DIR: './data',
      ADMIN_USERNAME: 'admin',
      WEBHOOK_MODE: 'builtin',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: false,
      DEFAULT_CURRENCY: 'USD',
      LOG_LEVEL: 'info',
      DB_POOL_SIZE: 20,
      DB_ACQUIRE_TIMEOUT_MS: 5000,
    });
    expect(config.WEBHOOK_RETRY_BASE_MS).toBeUndefined();
    expect(config.DATABASE_URL).toBeUndefined();
    expect(config.APP_KEY).toBeUndefined();
    expect(publicBaseUrl(config)).toBe('http://127.0.0.1:3000');
  });

  it('parses typed values: APP_KEY as hex or base64, booleans, the public URL', () => {
    const hex = loadConfig({ DATABASE_URL: 'postgres://u:p@db:5432/deals', APP_KEY: HEX_KEY, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'yes' });
    expect(hex.APP_KEY).toEqual(Buffer.alloc(32, 0xab));
    expect(hex.WEBHOOK_ALLOW_PRIVATE_TARGETS).toBe(true);
    const base64 = loadConfig({ APP_KEY: `base64:${Buffer.alloc(32, 0xab).toString('base64')}` });
    expect(base64.APP_KEY).toEqual(Buffer.alloc(32, 0xab));
    expect(publicBaseUrl(loadConfig({ PUBLIC_BASE_URL: 'https://crm.example.com/' }))).toBe('https://crm.example.com');
  });

  const bad: [string, Record<string, string>][] = [
    ['PORT', { PORT: 'abc' }],
    ['PORT', { PORT: '70000' }],
    ['DATABASE_URL', { DATABASE_URL: 'mysql://u:p@db/deals', APP_KEY: HEX_KEY }],
    ['APP_KEY', { APP_KEY: 'too-short' }],
    ['APP_KEY', { DATABASE_URL: 'postgres://u:p@db:5432/deals' }],
    ['ADMIN_PASSWORD', { ADMIN_PASSWORD: 'short' }],
    ['PUBLIC_BASE_URL', { PUBLIC_BASE_URL: 'ftp://example.com' }],
    ['WEBHOOK_MODE', { WEBHOOK_MODE: 'carrier-pigeon' }],
    ['HOST_WEBHOOK_URL', { WEBHOOK_MODE: 'forward', HOST_WEBHOOK_SECRET: 'a-secret-of-16-chars' }],
    ['HOST_WEBHOOK_URL', { HOST_WEBHOOK_URL: 'not a url' }],
    ['HOST_WEBHOOK_SECRET', { WEBHOOK_MODE: 'forward', HOST_WEBHOOK_URL: 'https://host.example.com/hooks' }],
    ['HOST_WEBHOOK_SECRET', { HOST_WEBHOOK_SECRET: 'short' }],
    ['WEBHOOK_ALLOW_PRIVATE_TARGETS', { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'maybe' }],
    ['DEFAULT_CURRENCY', { DEFAULT_CURRENCY: 'usd' }],
    ['LOG_LEVEL', { LOG_LEVEL: 'loud' }],
    ['DB_POOL_SIZE', { DB_POOL_SIZE: '0' }],
    ['DB_ACQUIRE_TIMEOUT_MS', { DB_ACQUIRE_TIMEOUT_MS: '50' }],
    // Only ever shortens the schedule: 10 s and 8 h are the ceilings.
    ['WEBHOOK_RETRY_BASE_MS', { WEBHOOK_RETRY_BASE_MS: '60000' }],
    ['WEBHOOK_RETRY_MAX_MS', { WEBHOOK_RETRY_MAX_MS: '86400000' }],
    ['WEBHOOK_RETRY_BASE_MS', { WEBHOOK_RETRY_BASE_MS: '5000', WEBHOOK_RETRY_MAX_MS: '2000' }],
  ];

  it.each(bad)('refuses a bad %s with one line naming it', (variable, env) => {
    const message = failure(env);
    expect(message).not.toContain('\n');
    expect(message).toMatch(new RegExp(`^Invalid configuration: ${variable}: \\S`));
  });

  it('stops the server before anything starts, with one line on stderr and exit code 1', () => {
    const result = spawnSync(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
      env: { PATH: process.env.PATH, PORT: 'not-a-port', DATA_DIR: '/nonexistent/never-created' },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(result.status).toBe(1);
    expect(result.stdout).toBe('');
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^Invalid configuration: PORT: /);
  });
});
