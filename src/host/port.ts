import type { Actor } from './permissions.js';

/**
 * The host platform, as this service sees it. Standalone mode implements it on
 * our own tables (host/builtin); a deployment inside a real host implements the
 * same port against that host's APIs.
 *
 * Users and contacts live in the same database in standalone mode, so deal reads
 * join them directly (one round trip per deal view); a remote host would keep a
 * local copy of those two tables in sync instead.
 */
export interface TokenGrant {
  access_token: string;
  token_type: 'bearer';
  expires_in: number;
}

export interface HostAuth {
  authenticateBasic(username: string, password: string): Promise<Actor | null>;
  authenticateBearer(token: string): Promise<Actor | null>;
  /** OAuth 2.0 client-credentials grant. */
  issueToken(clientId: string, clientSecret: string): Promise<TokenGrant | null>;
  /** Drops cached credentials after users, roles or API credentials change. */
  forget(): void;
}
