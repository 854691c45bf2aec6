import type { FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify';
import fp from 'fastify-plugin';
import type { AppError } from '../http/errors.js';
import { prefersHtml } from '../http/session.js';
import { errorPage, sendHtml, viewOf } from './page.js';

/**
 * What makes an API read also a page: routes declaring `config.page:
 * 'negotiated'` answer browsers (Accept preferring text/html) with the page
 * registered for them here, and everyone else with the API's JSON, unchanged.
 * Registered before the guard and the routes, so its hooks see both.
 */

export type PageHandler = (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply>;

/** Pages for negotiated routes, by route URL (without the mount prefix). Filled by the UI plugin at start-up. */
export type PageTable = Map<string, PageHandler>;

const isPage = (request: FastifyRequest) => {
  const page = request.routeOptions.config.page;
  return page === 'page' || (page === 'negotiated' && request.method === 'GET' && prefersHtml(request));
};

function renderError(base: string) {
  return (request: FastifyRequest) => (reply: FastifyReply, error: AppError) => {
    const retry = error.headers['Retry-After'];
    if (retry) void reply.header('Retry-After', retry);
    // htmx shows the words in a toast (app.js); a full page request gets a page.
    if (request.headers['hx-request']) return reply.code(error.statusCode).type('text/plain; charset=utf-8').send(error.message);
    // A signed-in user keeps the top bar (the way back, and Log out) on an error page too.
    const view = request.actor ? viewOf(request, base) : { base, csrf: request.pageSession?.csrf ?? '' };
    return sendHtml(reply, errorPage(view, error.statusCode, error.message), error.statusCode);
  };
}

export const pageNegotiation = fp<{ pages: PageTable }>(async (app, { pages }) => {
  const base = app.prefix;
  const errorFor = renderError(base);
  app.addHook('onRequest', async (request) => {
    if (!isPage(request)) return;
    request.errorPage = errorFor(request);
    // A filter form's "Anyone"/"All" choices send empty values, which mean "no filter" rather than an invalid one.
    const query = request.query as Record<string, unknown>;
    for (const key of Object.keys(query ?? {})) if (query[key] === '') delete query[key];
  });
  app.addHook('onRoute', (route) => {
    if (route.config?.page !== 'negotiated') return;
    const api = route.handler as RouteHandlerMethod;
    const path = route.url.slice(base.length);
    route.handler = function negotiated(request, reply) {
      const page = pages.get(path);
      // One URL, two representations: caches must key on Accept.
      void reply.header('Vary', 'Accept, Cookie');
      if (page && prefersHtml(request)) return page(request, reply);
      return api.call(this, request, reply);
    };
  });
});
