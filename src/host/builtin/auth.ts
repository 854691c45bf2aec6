import { createHash, randomBytes } from 'node:crypto';
import type { Db, Executor } from '../../db/database.js';
import type { Actor } from '../permissions.js';
import type { HostAuth, TokenGrant } from '../port.js';
import { DUMMY_HASH, verifyPassword } from '../passwords.js';

/** Verified credentials are remembered this long, so Basic auth costs one scrypt per minute, not per request. */
const CACHE_TTL_MS = 60_000;
const CACHE_MAX_ENTRIES = 10_000;
export const TOKEN_TTL_SECONDS = 3600;

export const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

interface ActorRow {
  id: number;
  name: string;
  username: string;
  role_id: number;
  is_admin: boolean;
  permissions: string[];
}

function toActor(row: ActorRow): Actor {
  return {
    id: row.id,
    name: row.name,
    username: row.username,
    roleId: row.role_id,
    isAdmin: row.is_admin,
    permissions: new Set(row.permissions),
  };
}

function actorQuery(db: Executor) {
  return db
    .selectFrom('users')
    .innerJoin('roles', 'roles.id', 'users.role_id')
    .select(['users.id', 'users.name', 'users.username', 'users.role_id', 'roles.is_admin', 'roles.permissions'])
    .where('users.is_active', '=', true)
    .$narrowType<{ role_id: number }>();
}

/**
 * Authentication against the built-in host's tables. The cache is keyed by a
 * SHA-256 of the credentials (never the password itself) and cleared whenever
 * users, roles or credentials change in this process.
 */
export interface BuiltinAuth extends HostAuth {
  /** OAuth 2.0 client-credentials grant for the built-in host's API credentials. */
  issueToken(clientId: string, clientSecret: string): Promise<TokenGrant | null>;
}

export function createBuiltinAuth(db: Db): BuiltinAuth {
  const cache = new Map<string, { actor: Actor; expires: number }>();

  const remember = (key: string, actor: Actor) => {
    if (cache.size >= CACHE_MAX_ENTRIES) cache.delete(cache.keys().next().value!);
    cache.set(key, { actor, expires: Date.now() + CACHE_TTL_MS });
  };
  const recall = (key: string) => {
    const hit = cache.get(key);
    if (hit && hit.expires > Date.now()) return hit.actor;
    if (hit) cache.delete(key);
    return undefined;
  };

  return {
    async authenticateBasic(username, password) {
      const key = sha256(`basic\0${username}\0${password}`);
      const cached = recall(key);
      if (cached) return cached;
      const row = await actorQuery(db)
        .select('users.password_hash')
        .where((eb) => eb(eb.fn('lower', ['users.username']), '=', username.toLowerCase()))
        .executeTakeFirst();
      const valid = await verifyPassword(password, row?.password_hash ?? DUMMY_HASH);
      if (!row || !valid) return null;
      const actor = toActor(row);
      remember(key, actor);
      return actor;
    },

    async authenticateBearer(token) {
      const tokenHash = sha256(token);
      const cached = recall(`bearer\0${tokenHash}`);
      if (cached) return cached;
      const row = await actorQuery(db)
        .innerJoin('oauth_tokens', 'oauth_tokens.user_id', 'users.id')
        .where('oauth_tokens.token_hash', '=', tokenHash)
        .where('oauth_tokens.expires_at', '>', new Date())
        .select('oauth_tokens.expires_at')
        .executeTakeFirst();
      if (!row) return null;
      const actor = toActor(row);
      // Never remember a token past its own expiry.
      if (row.expires_at.getTime() - Date.now() > CACHE_TTL_MS) remember(`bearer\0${tokenHash}`, actor);
      return actor;
    },

    async issueToken(clientId, clientSecret): Promise<TokenGrant | null> {
      const credential = await db
        .selectFrom('api_credentials')
        .innerJoin('users', 'users.id', 'api_credentials.user_id')
        .select(['api_credentials.id', 'api_credentials.user_id', 'api_credentials.client_secret_hash'])
        .where('api_credentials.client_id', '=', clientId)
        .where('users.is_active', '=', true)
        .executeTakeFirst();
      // Client secrets are 32 random bytes, so a fast hash is enough (no KDF needed).
      if (!credential || credential.client_secret_hash !== sha256(clientSecret)) return null;
      const accessToken = randomBytes(32).toString('base64url');
      const expiresAt = new Date(Date.now() + TOKEN_TTL_SECONDS * 1000);
      await db.transaction().execute(async (trx) => {
        await trx.deleteFrom('oauth_tokens').where('expires_at', '<', new Date()).execute();
        await trx
          .insertInto('oauth_tokens')
          .values({ token_hash: sha256(accessToken), credential_id: credential.id, user_id: credential.user_id, expires_at: expiresAt })
          .execute();
        await trx.updateTable('api_credentials').set({ last_used_at: new Date() }).where('id', '=', credential.id).execute();
      });
      return { access_token: accessToken, token_type: 'bearer', expires_in: TOKEN_TTL_SECONDS };
    },

    forget() {
      cache.clear();
    },
  };
}
