import { errors, jwtVerify } from 'jose';
import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import { UnauthorizedError } from '../http/errors.js';
import { PERMISSIONS, type Actor } from './permissions.js';

/**
 * Host-routed requests, for any host: a host that already authenticated its
 * user forwards the call with `X-Host-Assertion`, a compact JWT signed HS256
 * with HOST_ASSERTION_KEY naming the user (`sub`, `name`, `email`) and what
 * they may do here (`role`, a role name of this service, or `permissions`).
 * It lives at most 60 s and is accepted once (`jti`, remembered in PostgreSQL
 * so every process sharing the database refuses a replay).
 */

export const ASSERTION_HEADER = 'x-host-assertion';
const MAX_LIFETIME_S = 60;
const CLOCK_TOLERANCE_S = 5;

interface AssertionClaims {
  sub: string;
  name: string;
  email: string | null;
  role?: string;
  permissions?: string[];
  iat: number;
  exp: number;
  jti: string;
}

const refused = (why: string) => new UnauthorizedError(`Invalid host assertion: ${why}`);

function claimsOf(payload: Record<string, unknown>): AssertionClaims {
  const { sub, name, email, role, permissions, iat, exp, jti } = payload;
  if (typeof sub !== 'string' || !/^[1-9][0-9]{0,9}$/.test(sub) || Number(sub) > 2_147_483_647) throw refused('sub must be a host user id');
  if (typeof name !== 'string' || name.trim() === '' || name.length > 255) throw refused('name is required');
  if (email !== undefined && email !== null && (typeof email !== 'string' || email.length > 320)) throw refused('email must be a string');
  if (typeof jti !== 'string' || jti.length === 0 || jti.length > 200) throw refused('jti is required');
  if (role !== undefined && typeof role !== 'string') throw refused('role must be a role name');
  if (permissions !== undefined && !(Array.isArray(permissions) && permissions.every((p) => typeof p === 'string'))) {
    throw refused('permissions must be a list of names');
  }
  if (role === undefined && permissions === undefined) throw refused('role or permissions is required');
  if (typeof iat !== 'number' || typeof exp !== 'number') throw refused('iat and exp are required');
  if (exp - iat > MAX_LIFETIME_S) throw refused(`exp must be at most ${MAX_LIFETIME_S} s after iat`);
  return { sub, name: name.trim(), email: (email as string | null | undefined) ?? null, role, permissions: permissions as string[] | undefined, iat, exp, jti };
}

export interface AssertionVerifier {
  /** The actor a valid, unused assertion names; 401 (UnauthorizedError) for anything else. */
  verify(token: string): Promise<Actor>;
}

export function createAssertionVerifier(db: Db, key: string): AssertionVerifier {
  const secret = new TextEncoder().encode(key);
  let lastPrune = 0;

  async function claim(jti: string, exp: number): Promise<boolean> {
    if (Date.now() - lastPrune > 60_000) {
      lastPrune = Date.now();
      await db.deleteFrom('host_assertion_jtis').where('expires_at', '<', new Date(Date.now() - CLOCK_TOLERANCE_S * 1000)).execute();
    }
    const inserted = await db
      .insertInto('host_assertion_jtis')
      .values({ jti, expires_at: new Date(exp * 1000) })
      .onConflict((oc) => oc.column('jti').doNothing())
      .returning('jti')
      .executeTakeFirst();
    return inserted !== undefined;
  }

  /**
   * The named user in the local copy: created on first sight, its name and
   * email refreshed when it is a copy. A user the built-in host owns (no
   * synced_at) is used as it is, and must be active.
   */
  async function localUser(claims: AssertionClaims): Promise<{ id: number; username: string; name: string }> {
    const id = Number(claims.sub);
    await sql`
      insert into users (id, username, name, email, synced_at)
      values (${id}, ${`host-user-${id}`}, ${claims.name}, ${claims.email}, now())
      on conflict do nothing`.execute(db);
    await sql`select setval(pg_get_serial_sequence('users', 'id'), greatest((select max(id) from users), 1))`.execute(db);
    const row = await db
      .updateTable('users')
      .set({ name: claims.name, email: claims.email, synced_at: new Date() })
      .where('id', '=', id)
      .where('synced_at', 'is not', null)
      .returning(['id', 'username', 'name', 'is_active'])
      .executeTakeFirst();
    const user = row ?? (await db.selectFrom('users').select(['id', 'username', 'name', 'is_active']).where('id', '=', id).executeTakeFirst());
    if (!user || !user.is_active) throw refused('the user is not active here');
    return user;
  }

  async function permissionsOf(claims: AssertionClaims): Promise<Pick<Actor, 'roleId' | 'isAdmin' | 'permissions'>> {
    if (claims.role !== undefined) {
      const role = await db
        .selectFrom('roles')
        .select(['id', 'is_admin', 'permissions'])
        .where(sql`lower(name)`, '=', claims.role.toLowerCase())
        .executeTakeFirst();
      if (!role) throw refused(`unknown role "${claims.role}"`);
      return { roleId: role.id, isAdmin: role.is_admin, permissions: new Set(role.permissions) };
    }
    const known = new Set<string>(PERMISSIONS);
    // No role: only pipelines open to every role are visible (role id 0 matches no restriction).
    return { roleId: 0, isAdmin: false, permissions: new Set(claims.permissions!.filter((p) => known.has(p))) };
  }

  return {
    async verify(token) {
      let payload: Record<string, unknown>;
      try {
        ({ payload } = await jwtVerify(token, secret, { algorithms: ['HS256'], maxTokenAge: MAX_LIFETIME_S, clockTolerance: CLOCK_TOLERANCE_S }));
      } catch (error) {
        if (error instanceof errors.JWTExpired) throw refused('expired');
        if (error instanceof errors.JWTClaimValidationFailed) throw refused(error.message.replace(/"/g, ''));
        if (error instanceof errors.JOSEError) throw refused('bad signature or format');
        throw error;
      }
      const claims = claimsOf(payload);
      if (!(await claim(claims.jti, claims.exp))) throw refused('already used (jti)');
      const rights = await permissionsOf(claims); // before the user is written: an unknown role creates nobody
      const user = await localUser(claims);
      return { id: user.id, name: user.name, username: user.username, ...rights };
    },
  };
}
