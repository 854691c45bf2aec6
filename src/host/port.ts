import type { FastifyPluginAsync } from 'fastify';
import type { Config } from '../config.js';
import type { Actor } from './permissions.js';
import type { UiOptions } from '../ui/index.js';

/**
 * The host platform, as this service sees it: the one interface the domain
 * depends on and every adapter implements (host/builtin on our own tables,
 * host/mautic over Mautic's REST API). The adapter is picked once at start-up.
 *
 * Deals reference people by the host's ids. Deal reads join the local `users`
 * and `contacts` tables in one statement: for the built-in host those tables are
 * the host itself; for a remote host they are a local copy of the people deals
 * reference, which the adapter fills before a write needs a row (`ensure`) and
 * keeps fresh (`refresh`, the host's own webhooks).
 */

export interface TokenGrant {
  access_token: string;
  token_type: 'bearer';
  expires_in: number;
}

export interface HostAuth {
  /** The caller behind HTTP Basic credentials, or null when they are wrong. */
  authenticateBasic(username: string, password: string): Promise<Actor | null>;
  /** The caller behind an OAuth 2 bearer token, or null when it is unknown or expired. */
  authenticateBearer(token: string): Promise<Actor | null>;
  /** Drops cached credentials after users, roles or API credentials change. */
  forget(): void;
}

/** A host user as owner pickers and deal cards show them. */
export interface HostUser {
  id: number;
  name: string;
  email: string | null;
}

/** A host contact as the local copy keeps it. */
export interface ContactRow {
  id: number;
  email: string;
  first_name: string | null;
  last_name: string | null;
  company: string | null;
}

export interface ContactByEmail {
  email: string;
  first_name?: string | null;
  last_name?: string | null;
  company?: string | null;
}

export interface HostUsers {
  /** Makes the local copy hold these users (fetched from the host when missing or stale); unknown ids are left out. */
  ensure(ids: number[]): Promise<void>;
  /** Active users whose name, username or email contains `search`, for owner and assignee pickers. */
  search(options: { search?: string; limit: number }): Promise<HostUser[]>;
}

export interface HostContacts {
  /** Makes the local copy hold these contacts (fetched from the host when missing or stale); unknown ids are left out. */
  ensure(ids: number[]): Promise<void>;
  /** Contacts whose email, first, last or full name contains `search`, for committee pickers. */
  search(options: { search: string; limit: number }): Promise<ContactRow[]>;
  /**
   * Finds contacts by email (any letter case) or creates them in the host, and
   * answers their local copies by lower-cased email. Never called inside a
   * transaction: a remote host is an HTTP call.
   */
  findOrCreateByEmail(wanted: ContactByEmail[]): Promise<Map<string, { contact: ContactRow; created: boolean }>>;
}

/** Where outbound events go: this service's own subscriptions, or all of them forwarded to the host's dispatcher. */
export type EventDispatch = { mode: 'builtin' } | { mode: 'forward'; url: string; secret: string };

/** The dispatch WEBHOOK_MODE asks for; any adapter may use it (config.ts guarantees forward mode has its URL and secret). */
export function dispatchFromConfig(config: Pick<Config, 'WEBHOOK_MODE' | 'HOST_WEBHOOK_URL' | 'HOST_WEBHOOK_SECRET'>): EventDispatch {
  return config.WEBHOOK_MODE === 'forward' && config.HOST_WEBHOOK_URL && config.HOST_WEBHOOK_SECRET
    ? { mode: 'forward', url: config.HOST_WEBHOOK_URL, secret: config.HOST_WEBHOOK_SECRET }
    : { mode: 'builtin' };
}

export interface HostPort {
  readonly name: string;
  readonly auth: HostAuth;
  readonly users: HostUsers;
  readonly contacts: HostContacts;
  readonly dispatch: EventDispatch;
  /** Whether the host's users and roles are managed here (the built-in host) or by the host itself. */
  readonly managesUsers: boolean;
  /** Reads answered from the local copy: refresh the entries older than the configured age, in the background. */
  refresh(refs: { userIds: number[]; contactIds: number[] }): void;
  /** Routes the host adds (the built-in host's /host/* management and its token endpoint). */
  readonly routes?: FastifyPluginAsync<HostRouteOptions>;
  /** Settings pages the host adds (the built-in host's users, roles, API credentials and your account), in the pages' frame. */
  readonly pages?: FastifyPluginAsync<UiOptions>;
  close?(): Promise<void>;
}

/** What domain services need of the host to write references to its people. */
export type People = Pick<HostPort, 'users' | 'contacts' | 'refresh'>;

export interface HostRouteOptions {
  baseUrl: string;
  /** Tells every service process sharing the database to drop its cached logins. */
  forgetLogins(): void;
}
