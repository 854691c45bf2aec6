import basicAuth from '@fastify/basic-auth';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { localCluster, type Cluster } from '../db/cluster.js';
import { ASSERTION_HEADER, type AssertionVerifier } from '../host/assertion.js';
import type { HostAuth } from '../host/port.js';
import { canAny, type Actor, type PermissionRequirement } from '../host/permissions.js';
import { ForbiddenError, RateLimitedError, UnauthorizedError } from './errors.js';
import { hasValidCsrf, prefersHtml, type PageSessions } from './session.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** What the caller needs; every route declares this or `public: true`. */
    permission?: PermissionRequirement;
    /** Only authentication, no particular permission (the caller's own data). */
    authenticated?: boolean;
    public?: boolean;
    /** A public route that checks credentials of its own (the token endpoint): its document lists 401 and 429. */
    credentials?: boolean;
    /** A public route authenticated by a request signature: its document lists 403. */
    signed?: boolean;
    /** A sales page ('page'), or an API read that answers a page to browsers ('negotiated'): a session cookie may authenticate it. */
    page?: 'page' | 'negotiated';
  }
  interface FastifyRequest {
    actor?: Actor;
  }
  interface FastifyInstance {
    /** Every registered route with what it declared (the permission walk test reads it). */
    routeTable: RouteEntry[];
    /** Shared by Basic, Bearer and the token endpoint's client authentication. */
    loginLimiter: LoginLimiter;
  }
}

export interface RouteEntry {
  method: string;
  url: string;
  permission?: PermissionRequirement;
  authenticated?: boolean;
  public?: boolean;
  page?: 'page' | 'negotiated';
}

/** The authenticated caller; the guard guarantees it on every non-public route. */
export function actorOf(request: FastifyRequest): Actor {
  if (!request.actor) throw new UnauthorizedError();
  return request.actor;
}

/** The one permission check: routes through their `config.permission`, the MCP tools through each tool's own. */
export function assertPermitted(actor: Actor, requirement: PermissionRequirement | undefined): void {
  if (requirement && !canAny(actor, requirement)) throw new ForbiddenError();
}

const FAILURE_WINDOW_MS = 60_000;
const LOGIN_FAILURE = 'login-failure';
const LOGIN_SUCCESS = 'login-success';
/** Failed attempts of one identity from one address before that pair waits out the window. */
const MAX_PAIR_FAILURES = 10;
/** Failed attempts from one address, whoever they named, before the address waits (one client spraying usernames). */
const MAX_ADDRESS_FAILURES = 50;
/** Failures of one identity from anywhere after which each further failure answers slowly (guessing spread over addresses). */
const SLOW_AFTER_FAILURES = 10;
const MAX_SLOW_DOWN_MS = 4_000;

/** Who a login attempt names (`user:<name>`, `client:<id>`, `bearer`) and where it comes from. */
export interface LoginAttempt {
  who: string;
  address: string;
}

/**
 * Failed logins, counted per identity and address together: ten failures of
 * one user from one address lock that pair for the window, so neither another
 * user behind the same office NAT nor the same user elsewhere is locked out,
 * and a success clears the pair. An address failing for many identities waits
 * too, and an identity failing from many addresses gets ever slower answers.
 * Shared by the processes on one database: each failure and success is told to
 * the others (the cluster bus).
 */
export class LoginLimiter {
  private failures = new Map<string, { count: number; resetAt: number }>();

  constructor(private readonly cluster: Cluster = localCluster()) {
    cluster.on(LOGIN_FAILURE, (attempt, fromSelf) => fromSelf || this.record(attempt as LoginAttempt));
    cluster.on(LOGIN_SUCCESS, (attempt, fromSelf) => fromSelf || this.clear(attempt as LoginAttempt));
  }

  check(attempt: LoginAttempt): void {
    this.assertUnder(`${attempt.who}@${attempt.address}`, MAX_PAIR_FAILURES);
    this.assertUnder(`@${attempt.address}`, MAX_ADDRESS_FAILURES);
  }

  /** Records a failure; resolves after the identity's slow-down, if it is being guessed at from many places. */
  async fail(attempt: LoginAttempt): Promise<void> {
    this.record(attempt);
    this.cluster.publish(LOGIN_FAILURE, attempt);
    const over = this.count(attempt.who) - SLOW_AFTER_FAILURES;
    if (over > 0) await new Promise((done) => setTimeout(done, Math.min(250 * 2 ** (over - 1), MAX_SLOW_DOWN_MS)));
  }

  /** The right credentials: that pair starts again, and the identity is no longer slowed down (guessers never succeed). */
  succeed(attempt: LoginAttempt): void {
    if (!this.failures.has(`${attempt.who}@${attempt.address}`) && !this.failures.has(attempt.who)) return;
    this.clear(attempt);
    this.cluster.publish(LOGIN_SUCCESS, attempt);
  }

  private count(key: string): number {
    const entry = this.failures.get(key);
    return entry && entry.resetAt > Date.now() ? entry.count : 0;
  }

  private assertUnder(key: string, max: number): void {
    const entry = this.failures.get(key);
    if (!entry) return;
    const now = Date.now();
    if (entry.resetAt <= now) this.failures.delete(key);
    else if (entry.count >= max) throw new RateLimitedError(Math.ceil((entry.resetAt - now) / 1000));
  }

  private record(attempt: LoginAttempt): void {
    if (typeof attempt?.who !== 'string' || typeof attempt.address !== 'string') return;
    const now = Date.now();
    for (const key of [`${attempt.who}@${attempt.address}`, `@${attempt.address}`, attempt.who]) {
      const entry = this.failures.get(key);
      if (!entry || entry.resetAt <= now) this.failures.set(key, { count: 1, resetAt: now + FAILURE_WINDOW_MS });
      else entry.count += 1;
    }
    while (this.failures.size > 50_000) this.failures.delete(this.failures.keys().next().value!);
  }

  private clear(attempt: LoginAttempt): void {
    if (typeof attempt?.who !== 'string') return;
    this.failures.delete(`${attempt.who}@${attempt.address}`);
    this.failures.delete(attempt.who);
  }
}

/** The identity an Authorization header names, for the limiter (never the secret). */
function attemptOf(header: string, address: string): LoginAttempt {
  if (/^bearer /i.test(header)) return { who: 'bearer', address };
  const decoded = Buffer.from(header.replace(/^basic /i, ''), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return { who: colon > 0 ? `user:${decoded.slice(0, colon).toLowerCase()}` : 'basic', address };
}

const UNSAFE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Browsers replay Basic credentials on cross-site requests, so a state-changing
 * request that a browser marks as cross-site, or whose Origin is foreign, is
 * refused. Clients that send neither header (curl, SDKs, servers) pass.
 */
function assertSameOrigin(request: FastifyRequest, publicOrigin: string | undefined): void {
  if (!UNSAFE_METHODS.has(request.method)) return;
  if (request.headers['sec-fetch-site'] === 'cross-site') throw new ForbiddenError('Cross-site request refused');
  const origin = request.headers.origin;
  if (!origin) return;
  const own = `${request.protocol}://${request.headers.host}`;
  if (origin !== own && origin !== publicOrigin) throw new ForbiddenError('Cross-origin request refused');
}

export interface GuardOptions {
  auth: HostAuth;
  /** Host-routed requests (X-Host-Assertion); absent when HOST_ASSERTION_KEY is unset, and then the header is ignored. */
  assertions?: AssertionVerifier;
  /** The processes sharing the database: failed logins count across them. */
  cluster?: Cluster;
  publicBaseUrl?: string;
  /** Routes under these prefixes are public without declaring it (the API reference's assets). */
  publicPrefixes?: string[];
  /** Browser sessions of the sales pages, and where a page request without one is sent. */
  sessions?: { store: PageSessions; loginPath: string };
}

/** A page request the session cookie may authenticate: page routes, and negotiated reads that prefer HTML. */
function isPageRequest(request: FastifyRequest): boolean {
  const page = request.routeOptions.config.page;
  return page === 'page' || (page === 'negotiated' && request.method === 'GET' && prefersHtml(request));
}

/** A page request without a session: browsers go to the login page and come back; htmx is told to go there. */
function toLogin(request: FastifyRequest, reply: FastifyReply, loginPath: string): FastifyReply {
  const back = request.method === 'GET' && !request.headers['hx-request'] ? `?next=${encodeURIComponent(request.url)}` : '';
  if (request.headers['hx-request']) return reply.code(401).header('HX-Redirect', loginPath).send();
  return reply.redirect(`${loginPath}${back}`, 303);
}

async function guard(app: FastifyInstance, options: GuardOptions): Promise<void> {
  const limiter = new LoginLimiter(options.cluster);
  const routeTable: RouteEntry[] = [];
  app.decorate('loginLimiter', limiter);
  app.decorate('routeTable', routeTable);
  const publicOrigin = options.publicBaseUrl ? new URL(options.publicBaseUrl).origin : undefined;

  await app.register(basicAuth, {
    authenticate: { realm: 'service' },
    async validate(username, password, request) {
      const actor = await options.auth.authenticateBasic(username, password).catch((error: unknown) => {
        // basic-auth turns any error without a status into a 401; a database outage must stay a 503.
        throw Object.assign(error as object, { statusCode: 500 });
      });
      if (!actor) throw new UnauthorizedError('Invalid credentials');
      request.actor = actor;
    },
  });

  const basic = (request: FastifyRequest, reply: FastifyReply) =>
    new Promise<void>((done, fail) =>
      app.basicAuth(request, reply, (error?: Error) => (error ? fail(error) : done())),
    );

  app.addHook('onRoute', (route) => {
    if (options.publicPrefixes?.some((prefix) => route.url.startsWith(prefix))) {
      route.config = { ...route.config, public: true };
    }
    const config = (route.config ?? {}) as { permission?: unknown; public?: boolean; authenticated?: boolean };
    const declared = [config.permission !== undefined, config.public === true, config.authenticated === true];
    if (declared.filter(Boolean).length !== 1) {
      throw new Error(
        `Route ${route.method} ${route.url} must declare exactly one of config.permission, config.authenticated or config.public`,
      );
    }
    for (const method of [route.method].flat()) {
      routeTable.push({
        method,
        url: route.url,
        permission: config.permission as PermissionRequirement | undefined,
        authenticated: config.authenticated,
        public: config.public,
        page: (config as { page?: RouteEntry['page'] }).page,
      });
    }
  });

  app.addHook('onRequest', async (request, reply) => {
    const config = request.routeOptions.config;
    if (!request.routeOptions.url || config.public) return; // unknown routes fall through to the 404 handler

    const assertion = request.headers[ASSERTION_HEADER];
    if (options.assertions && typeof assertion === 'string') {
      // The host authenticated its user; the assertion's signature, age and single use stand for the credentials.
      request.actor = await options.assertions.verify(assertion);
      assertPermitted(request.actor, config.permission);
      return;
    }

    const header = request.headers.authorization ?? '';
    if (options.sessions && !header && isPageRequest(request)) {
      const session = await options.sessions.store.load(request);
      if (!session) return toLogin(request, reply, options.sessions.loginPath);
      request.actor = session.actor;
      request.pageSession = session;
      assertSameOrigin(request, publicOrigin);
      assertPermitted(request.actor, config.permission);
      return;
    }
    const attempt = attemptOf(header, request.ip);
    if (header) limiter.check(attempt);
    try {
      if (/^bearer /i.test(header)) {
        const actor = await options.auth.authenticateBearer(header.slice(7).trim());
        if (!actor) throw new UnauthorizedError('Invalid or expired access token');
        request.actor = actor;
      } else if (!header) {
        throw new UnauthorizedError();
      } else {
        await basic(request, reply);
      }
    } catch (error) {
      const rejected = error instanceof UnauthorizedError || (error as { statusCode?: number }).statusCode === 401;
      if (!rejected) throw error; // a fault (database down), not a failed login
      if (header) await limiter.fail(attempt);
      throw error instanceof UnauthorizedError ? error : new UnauthorizedError('Invalid credentials');
    }
    limiter.succeed(attempt);

    assertSameOrigin(request, publicOrigin);
    assertPermitted(request.actor!, config.permission);
  });

  // A session cookie rides along on any request the browser makes, so a state-changing page request must
  // also prove it came from our page: the session's CSRF token (checked once the body is parsed).
  app.addHook('preValidation', async (request) => {
    const session = request.pageSession;
    if (session && UNSAFE_METHODS.has(request.method) && !hasValidCsrf(request, session.csrf)) {
      throw new ForbiddenError('Missing or invalid CSRF token: reload the page and try again');
    }
  });
}

export const guardPlugin = fp(guard, { name: 'guard' });
