import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import '@fastify/cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../db/database.js';
import type { Actor } from '../host/permissions.js';

/**
 * Browser sessions for the sales pages: a random token in an HttpOnly,
 * SameSite=Lax cookie, of which the database keeps only a SHA-256. Loading a
 * session re-reads the user and role every time, so a deactivated user or a
 * changed role takes effect on the next request, not at expiry. A user of a
 * remote host (Mautic) has no local role: the rights the host granted at login
 * stand for the session's life.
 *
 * The CSRF token is derived from the session token (a keyed hash of it): it is
 * per session, needs no storage, and cannot be computed by a page that cannot
 * read the HttpOnly cookie.
 */

export const SESSION_COOKIE = 'dps_session';
export const CSRF_HEADER = 'x-csrf-token';
export const CSRF_FIELD = '_csrf';
export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

export const csrfTokenFor = (sessionToken: string) => createHash('sha256').update(`csrf\0${sessionToken}`).digest('base64url');

export interface PageSession {
  actor: Actor;
  csrf: string;
  /** Still on a password someone else chose (first-run admin, or reset): the pages remind them to change it. */
  mustChangePassword: boolean;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set when a page session (not Basic or bearer) authenticated the request. */
    pageSession?: PageSession;
  }
}

export class PageSessions {
  constructor(
    private readonly db: Db,
    /** The cookie's path: the prefix the service is mounted under. */
    private readonly cookiePath: string,
    private readonly secure: boolean,
  ) {}

  async create(actor: Actor, reply: FastifyReply): Promise<void> {
    const token = randomBytes(32).toString('base64url');
    const expiresAt = new Date(Date.now() + SESSION_TTL_MS);
    // Expired rows of anyone go at each login, so the table never grows without bound.
    await this.db.deleteFrom('page_sessions').where('expires_at', '<', new Date()).execute();
    const rights = { roleId: actor.roleId, isAdmin: actor.isAdmin, permissions: [...actor.permissions] };
    await this.db
      .insertInto('page_sessions')
      .values({ token_hash: sha256(token), user_id: actor.id, rights: JSON.stringify(rights), expires_at: expiresAt })
      .execute();
    void reply.setCookie(SESSION_COOKIE, token, {
      path: this.cookiePath,
      httpOnly: true,
      sameSite: 'lax',
      secure: this.secure,
      expires: expiresAt,
    });
  }

  /** The session's user as an actor, or null when the cookie is missing, unknown, expired or its user inactive. */
  async load(request: FastifyRequest): Promise<PageSession | null> {
    const token = request.cookies?.[SESSION_COOKIE];
    if (!token || token.length > 100) return null;
    const row = await this.db
      .selectFrom('page_sessions')
      .innerJoin('users', 'users.id', 'page_sessions.user_id')
      .leftJoin('roles', 'roles.id', 'users.role_id')
      .select(['users.id', 'users.name', 'users.username', 'users.role_id', 'roles.is_admin', 'roles.permissions', 'page_sessions.rights', 'users.must_change_password'])
      .where('page_sessions.token_hash', '=', sha256(token))
      .where('page_sessions.expires_at', '>', new Date())
      .where('users.is_active', '=', true)
      .executeTakeFirst();
    if (!row) return null;
    // A local role is read again (a change applies at once); a remote host's user keeps what the host granted at login.
    const local = row.role_id !== null && row.is_admin !== null;
    const actor: Actor = {
      id: row.id,
      name: row.name,
      username: row.username,
      roleId: local ? row.role_id! : row.rights.roleId,
      isAdmin: local ? row.is_admin! : row.rights.isAdmin,
      permissions: new Set(local ? row.permissions! : row.rights.permissions),
    };
    return { actor, csrf: csrfTokenFor(token), mustChangePassword: row.must_change_password };
  }

  async destroy(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const token = request.cookies?.[SESSION_COOKIE];
    if (token) await this.db.deleteFrom('page_sessions').where('token_hash', '=', sha256(token)).execute();
    void reply.clearCookie(SESSION_COOKIE, { path: this.cookiePath });
  }
}

/** Whether a state-changing request carries the session's CSRF token (header from htmx, hidden field from forms). */
export function hasValidCsrf(request: FastifyRequest, expected: string): boolean {
  const header = request.headers[CSRF_HEADER];
  const field = (request.body as Record<string, unknown> | undefined)?.[CSRF_FIELD];
  const given = typeof header === 'string' ? header : typeof field === 'string' ? field : '';
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Whether the client prefers HTML to JSON: text/html named explicitly with a
 * quality at least that of JSON (named or through a wildcard). Browsers send
 * `text/html,...,*\/*;q=0.8`; curl and SDKs send `*\/*` or JSON.
 */
export function prefersHtml(request: FastifyRequest): boolean {
  const accept = request.headers.accept;
  if (!accept) return false;
  let html = -1;
  let json = -1;
  for (const part of accept.split(',')) {
    const [type = '', ...params] = part.trim().toLowerCase().split(';');
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const q = qParam ? Number(qParam.slice(2)) || 0 : 1;
    if (type === 'text/html') html = Math.max(html, q);
    if (type === 'application/json' || type === '*/*' || type === 'application/*') json = Math.max(json, q);
  }
  return html > 0 && html >= json;
}
