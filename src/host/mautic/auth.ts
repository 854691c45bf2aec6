import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import type { Db } from '../../db/database.js';
import { upsertUsers } from '../local-copy.js';
import { PERMISSIONS, type Actor } from '../permissions.js';
import type { HostAuth } from '../port.js';
import type { MauticClient } from './client.js';
import { toHostUser } from './users.js';

/** Mautic is asked again after this long, so a role change or a revoked password there takes effect within a minute. */
const CACHE_TTL_MS = 60_000;
const CACHE_MAX_ENTRIES = 10_000;

export const credentialKey = (authorization: string) => createHash('sha256').update(authorization).digest('hex');

/**
 * Callers are who Mautic says they are: their own Basic or bearer credentials
 * are sent to `GET /api/users/self`. Administrators get every permission; any
 * other Mautic role maps by name (MAUTIC_ROLE_MAP, else MAUTIC_DEFAULT_ROLE) to
 * a role of ours, whose permissions and id (pipeline visibility) apply. An
 * unmapped role gets nothing, so the caller sees 403 rather than a guess.
 */
export function createMauticAuth(options: {
  db: Db;
  client: MauticClient;
  config: Pick<Config, 'MAUTIC_ROLE_MAP' | 'MAUTIC_DEFAULT_ROLE'>;
  logger: Logger;
}): HostAuth & { cacheKeys(): string[] } {
  const { db, client, config, logger } = options;
  // Keyed by a SHA-256 of the Authorization header: the credentials themselves are never kept.
  const cache = new Map<string, { actor: Actor; expires: number }>();

  async function serviceRole(mauticRole: string | undefined) {
    const name = (mauticRole !== undefined ? config.MAUTIC_ROLE_MAP[mauticRole] : undefined) ?? config.MAUTIC_DEFAULT_ROLE;
    if (!name) return undefined;
    const role = await db
      .selectFrom('roles')
      .select(['id', 'is_admin', 'permissions'])
      .where((eb) => eb(eb.fn('lower', ['name']), '=', name.toLowerCase()))
      .executeTakeFirst();
    if (!role) logger.warn({ mauticRole, role: name }, 'MAUTIC_ROLE_MAP names a role this service does not have');
    return role;
  }

  async function authenticate(authorization: string): Promise<Actor | null> {
    const key = credentialKey(authorization);
    const hit = cache.get(key);
    if (hit && hit.expires > Date.now()) return hit.actor;
    if (hit) cache.delete(key);

    const answer = await client.asCaller(authorization, '/api/users/self');
    if (answer.status !== 200 || !answer.body) return null;
    const self = answer.body;
    if (typeof self.id !== 'number') {
      // Mautic's client_credentials grant acts as a stand-in user with no id: nothing here could own or create a deal as it.
      logger.info('Refused a Mautic client-credentials caller: it has no Mautic user id; use a user\'s credentials or an authorization-code token');
      return null;
    }
    const user = toHostUser(self);
    await upsertUsers(db, [user]);
    const mauticRole = self.role ?? {};
    let actor: Actor;
    if (mauticRole.isAdmin === true) {
      actor = { id: user.id, name: user.name, username: user.username, roleId: 0, isAdmin: true, permissions: new Set(PERMISSIONS) };
    } else {
      const role = await serviceRole(typeof mauticRole.name === 'string' ? mauticRole.name : undefined);
      actor = {
        id: user.id,
        name: user.name,
        username: user.username,
        // No mapped role: an id no role has, so no pipeline is visible through a role either.
        roleId: role?.id ?? 0,
        isAdmin: role?.is_admin ?? false,
        permissions: new Set(role?.permissions ?? []),
      };
    }
    if (cache.size >= CACHE_MAX_ENTRIES) cache.delete(cache.keys().next().value!);
    cache.set(key, { actor, expires: Date.now() + CACHE_TTL_MS });
    return actor;
  }

  return {
    authenticateBasic: (username, password) => authenticate(`Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`),
    authenticateBearer: (token) => authenticate(`Bearer ${token}`),
    forget() {
      cache.clear();
    },
    cacheKeys: () => [...cache.keys()],
  };
}
