import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RouteDeps } from '../routes/deps.js';
import { AppError } from '../http/errors.js';
import type { PageSessions } from '../http/session.js';
import { html } from './html.js';
import { layout, sendHtml } from './page.js';

/**
 * Login and logout. The same passwords (the host's authenticateBasic) and the
 * same failed-login limit (the guard's loginLimiter) as the API's Basic auth.
 */

/** Only a path on this service: `//evil.example`, `/\evil` and absolute URLs are dropped. */
export function safeNext(next: unknown, base: string): string {
  const fallback = `${base}/service/board`;
  if (typeof next !== 'string' || next.length > 2000) return fallback;
  if (!next.startsWith(`${base}/`) || next.startsWith('//') || /[\\\u0000-\u001f]/.test(next)) return fallback;
  if (next.startsWith(`${base}/service/login`) || next.startsWith(`${base}/service/logout`)) return fallback;
  return next;
}

function loginPage(base: string, next: string, username = '', error = '') {
  return layout(
    { base, csrf: '' },
    'Log in',
    html`<section class="panel narrow login">
  <h1>Log in</h1>
  <p class="muted">Use your platform user name and password.</p>
  ${error ? html`<p class="form-error" role="alert">${error}</p>` : ''}
  <form method="post" action="${base}/service/login" class="stack">
    <input type="hidden" name="next" value="${next}">
    <label class="field"><span>User name</span><input name="username" value="${username}" autocomplete="username" required autofocus></label>
    <label class="field"><span>Password</span><input name="password" type="password" autocomplete="current-password" required></label>
    <button class="primary">Log in</button>
  </form>
</section>`,
  );
}

/** A login form posted from another site is refused (login CSRF would sign the victim into the attacker's account). */
function crossSite(request: FastifyRequest): boolean {
  if (request.headers['sec-fetch-site'] === 'cross-site') return true;
  const origin = request.headers.origin;
  return Boolean(origin && origin !== 'null' && origin !== `${request.protocol}://${request.headers.host}`);
}

export async function loginRoutes(app: FastifyInstance, deps: RouteDeps & { sessions: PageSessions }): Promise<void> {
  const base = app.prefix;

  app.get('/service/login', { config: { public: true }, schema: { hide: true } }, async (request, reply) => {
    const next = safeNext((request.query as Record<string, unknown>).next, base);
    return sendHtml(reply, loginPage(base, next));
  });

  app.post('/service/login', { config: { public: true }, schema: { hide: true } }, async (request, reply: FastifyReply) => {
    const body = (request.body ?? {}) as Record<string, unknown>;
    const next = safeNext(body.next, base);
    const username = typeof body.username === 'string' ? body.username.slice(0, 200) : '';
    const password = typeof body.password === 'string' ? body.password.slice(0, 1000) : '';
    if (crossSite(request)) return sendHtml(reply, loginPage(base, next, username, 'Log in from this site’s own page.'), 403);
    // The same identity key as Basic auth uses, so the page and the API share one count per user and address.
    const attempt = { who: username ? `user:${username.toLowerCase()}` : 'basic', address: request.ip };
    try {
      app.loginLimiter.check(attempt);
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      return sendHtml(reply.header('Retry-After', error.headers['Retry-After'] ?? '60'), loginPage(base, next, username, 'Too many failed attempts. Wait a minute and try again.'), 429);
    }
    const actor = username && password ? await deps.host.auth.authenticateBasic(username, password) : null;
    if (!actor) {
      await app.loginLimiter.fail(attempt);
      // 200, not 401: a 401 would ask for Basic credentials, and this page is the way to give them.
      return sendHtml(reply, loginPage(base, next, username, 'That user name and password do not match.'));
    }
    app.loginLimiter.succeed(attempt);
    await deps.sessions.create(actor, reply);
    return reply.redirect(next, 303);
  });

  app.post('/service/logout', { config: { authenticated: true, page: 'page' }, schema: { hide: true } }, async (request, reply) => {
    await deps.sessions.destroy(request, reply);
    return reply.redirect(`${base}/service/login`, 303);
  });
}
