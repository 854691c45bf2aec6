import { z } from 'zod';

/** Every setting the service reads from the environment, parsed once at start-up. */

const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((value) => value === 'true' || value === '1' || value === 'yes');

const emptyAsUndefined = (value: unknown) => (value === '' ? undefined : value);

const schema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().min(1).default('127.0.0.1'),
  /** Behind a reverse proxy: take the client address (login limiter, logs) from X-Forwarded-For. */
  TRUST_PROXY: bool.default(false),
  DATABASE_URL: z.preprocess(emptyAsUndefined, z.url({ protocol: /^postgres(ql)?$/ }).optional()),
  DATA_DIR: z.string().min(1).default('./data'),
  APP_KEY: z.preprocess(
    emptyAsUndefined,
    z
      .string()
      .regex(/^(base64:)?[A-Za-z0-9+/]{43}=$|^[0-9a-f]{64}$/, 'must be 32 bytes as 64 hex characters or base64')
      .optional(),
  ),
  /** During a key rotation: the key the stored secrets were sealed with until `npm run rekey` re-seals them under APP_KEY. */
  APP_KEY_PREVIOUS: z.preprocess(
    emptyAsUndefined,
    z
      .string()
      .regex(/^(base64:)?[A-Za-z0-9+/]{43}=$|^[0-9a-f]{64}$/, 'must be 32 bytes as 64 hex characters or base64')
      .optional(),
  ),
  ADMIN_USERNAME: z.string().min(1).max(100).default('admin'),
  ADMIN_PASSWORD: z.preprocess(emptyAsUndefined, z.string().min(12, 'must be at least 12 characters').optional()),
  PUBLIC_BASE_URL: z.preprocess(emptyAsUndefined, z.url({ protocol: /^https?$/ }).optional()),
  WEBHOOK_MODE: z.enum(['builtin', 'forward']).default('builtin'),
  HOST_WEBHOOK_URL: z.preprocess(emptyAsUndefined, z.url({ protocol: /^https?$/ }).optional()),
  HOST_WEBHOOK_SECRET: z.preprocess(emptyAsUndefined, z.string().min(16).optional()),
  WEBHOOK_ALLOW_PRIVATE_TARGETS: bool.default(false),
  DEFAULT_CURRENCY: z
    .string()
    .regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code such as USD')
    .default('USD'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  WORKER: z.enum(['inline', 'off']).default('inline'),
  WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(200).default(16),
  INBOUND_RATE_LIMIT: z.coerce.number().int().min(1).max(100_000).default(100),
  /** The host platform adapter: our own tables, or Mautic's REST API (HOST stays the listen address). */
  HOST_PLATFORM: z.enum(['builtin', 'mautic']).default('builtin'),
  /** A remote host's users and contacts are read again when their local copy is older than this. */
  HOST_COPY_MAX_AGE: z.coerce.number().int().min(0).max(86_400).default(300),
  /** Calls to a remote host give up after this long (then 503 with Retry-After). */
  HOST_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(5000),
  /** HS256 key of X-Host-Assertion; unset: the header is ignored. */
  HOST_ASSERTION_KEY: z.preprocess(emptyAsUndefined, z.string().min(32, 'must be at least 32 characters').optional()),
  MAUTIC_URL: z.preprocess(emptyAsUndefined, z.url({ protocol: /^https?$/ }).optional()),
  MAUTIC_USERNAME: z.preprocess(emptyAsUndefined, z.string().optional()),
  MAUTIC_PASSWORD: z.preprocess(emptyAsUndefined, z.string().optional()),
  MAUTIC_CLIENT_ID: z.preprocess(emptyAsUndefined, z.string().optional()),
  MAUTIC_CLIENT_SECRET: z.preprocess(emptyAsUndefined, z.string().optional()),
  /** Mautic role name = this service's role name, comma-separated: `Sales team=Seller,Managers=Manager`. */
  MAUTIC_ROLE_MAP: z.preprocess(
    emptyAsUndefined,
    z
      .string()
      .regex(/^\s*[^=,]+=[^=,]+(\s*,\s*[^=,]+=[^=,]+)*\s*$/, 'must be "Mautic role=Service role" pairs separated by commas')
      .transform((value) => Object.fromEntries(value.split(',').map((pair) => pair.split('=').map((part) => part.trim()) as [string, string])))
      .default({}),
  ),
  /** The service role of a Mautic user whose role is not in MAUTIC_ROLE_MAP; unset: no permissions. */
  MAUTIC_DEFAULT_ROLE: z.preprocess(emptyAsUndefined, z.string().optional()),
  /** The secret of the webhook Mautic sends contact changes with (Webhook-Signature). */
  MAUTIC_WEBHOOK_SECRET: z.preprocess(emptyAsUndefined, z.string().min(1).optional()),
});

export type Env = z.infer<typeof schema>;

export interface Config extends Omit<Env, 'APP_KEY' | 'APP_KEY_PREVIOUS'> {
  /** 32-byte key; resolved by the server (generated into DATA_DIR in embedded mode). */
  APP_KEY?: Buffer;
  APP_KEY_PREVIOUS?: Buffer;
}

/** The keys that open stored secrets, newest first; new secrets are sealed with the first. */
export function appKeys(config: Pick<Config, 'APP_KEY' | 'APP_KEY_PREVIOUS'>): Buffer[] {
  if (!config.APP_KEY) throw new Error('APP_KEY is required to open stored secrets');
  return config.APP_KEY_PREVIOUS ? [config.APP_KEY, config.APP_KEY_PREVIOUS] : [config.APP_KEY];
}

export class ConfigError extends Error {}

export function parseAppKey(value: string): Buffer {
  return /^[0-9a-f]{64}$/.test(value) ? Buffer.from(value, 'hex') : Buffer.from(value.replace(/^base64:/, ''), 'base64');
}

/** Parses the environment; a bad value throws a ConfigError with one line naming the variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const result = schema.safeParse(env);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    throw new ConfigError(`Invalid configuration: ${String(issue.path[0])}: ${issue.message}`);
  }
  const parsed = result.data;
  if (parsed.WEBHOOK_MODE === 'forward' && (!parsed.HOST_WEBHOOK_URL || !parsed.HOST_WEBHOOK_SECRET)) {
    const missing = parsed.HOST_WEBHOOK_URL ? 'HOST_WEBHOOK_SECRET' : 'HOST_WEBHOOK_URL';
    throw new ConfigError(`Invalid configuration: ${missing}: required when WEBHOOK_MODE=forward`);
  }
  if (parsed.HOST_PLATFORM === 'mautic') {
    if (!parsed.MAUTIC_URL) throw new ConfigError('Invalid configuration: MAUTIC_URL: required when HOST_PLATFORM=mautic');
    const basic = parsed.MAUTIC_USERNAME && parsed.MAUTIC_PASSWORD;
    const client = parsed.MAUTIC_CLIENT_ID && parsed.MAUTIC_CLIENT_SECRET;
    if (!basic && !client) {
      throw new ConfigError(
        'Invalid configuration: MAUTIC_USERNAME: required with MAUTIC_PASSWORD when HOST_PLATFORM=mautic (or MAUTIC_CLIENT_ID with MAUTIC_CLIENT_SECRET)',
      );
    }
  }
  if (parsed.DATABASE_URL && !parsed.APP_KEY) {
    throw new ConfigError('Invalid configuration: APP_KEY: required when DATABASE_URL is set (32 bytes, hex or base64)');
  }
  return {
    ...parsed,
    APP_KEY: parsed.APP_KEY ? parseAppKey(parsed.APP_KEY) : undefined,
    APP_KEY_PREVIOUS: parsed.APP_KEY_PREVIOUS ? parseAppKey(parsed.APP_KEY_PREVIOUS) : undefined,
  };
}

/** For the entry points: a bad environment ends the process with its one line on stderr. */
export function loadConfigOrExit(): Config {
  try {
    return loadConfig();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
}

export function publicBaseUrl(config: Pick<Config, 'PUBLIC_BASE_URL' | 'HOST' | 'PORT'>): string {
  if (config.PUBLIC_BASE_URL) return config.PUBLIC_BASE_URL.replace(/\/+$/, '');
  const host = config.HOST === '0.0.0.0' || config.HOST === '::' ? '127.0.0.1' : config.HOST;
  return `http://${host}:${config.PORT}`;
}
