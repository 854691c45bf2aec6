import type { RouteOptions } from 'fastify';
import { z } from 'zod';

/**
 * Every operation's OpenAPI entry lists the error statuses it can answer, each
 * with the contract's error body, so a generated client can type its errors.
 * Which statuses follow from what the route declares: credentials (401, and
 * 429 for the failed-login limit; `config.credentials` on a public route that
 * checks its own), a permission or a signature (403, `config.signed`), path
 * ids (404), a write (409), a body (413, 415, 422), a query (422); and 503
 * when the database is down.
 */

export const errorBodySchema = z
  .object({
    errors: z.array(
      z.object({
        code: z.number().int(),
        message: z.string(),
        details: z.record(z.string(), z.unknown()),
        type: z.string(),
      }),
    ),
  })
  // One component of the OpenAPI document (#/components/schemas/ErrorBody) that every error response refers to.
  .meta({ id: 'ErrorBody', description: 'The error body of every failure: {"errors":[{"code","message","details","type"}]}' });

/** A documented error response: what the status means here, with the error body (a reference to the one component). */
export function errorResponse(description: string) {
  return { description, content: { 'application/json': { schema: errorBodySchema } } };
}

const DESCRIPTIONS: Record<number, string> = {
  401: 'No or wrong credentials',
  403: 'Not allowed (permission, visibility, a cross-site request, or a wrong signature)',
  404: 'Not found',
  405: 'Method not allowed on this path (Allow lists those that are)',
  409: 'Conflicts with the current state (a duplicate, a pipeline or stage with deals, a role in use, a disabled webhook, ...)',
  413: 'Body too large',
  415: 'Unsupported content type: send application/json or application/x-www-form-urlencoded',
  422: 'Invalid input; details name each field as sent (deal[title])',
  429: 'Too many requests (failed logins, or an inbound source over its rate); see Retry-After',
  503: 'The database (or the host platform) is unavailable; see Retry-After',
};

function statusesOf(route: RouteOptions): number[] {
  const config = (route.config ?? {}) as { public?: boolean; permission?: unknown; signed?: boolean; credentials?: boolean };
  const schema = (route.schema ?? {}) as { params?: unknown; body?: unknown; querystring?: unknown };
  const statuses = new Set<number>([503]);
  // Public routes that check credentials of their own (the token endpoint) or a signature say so in their config.
  if (!config.public || config.credentials) [401, 429].forEach((s) => statuses.add(s));
  if (config.permission || config.signed) statuses.add(403);
  // Any write can meet a conflict with the current state, with or without a body (a delete of a stage with deals).
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  if (methods.some((method) => method !== 'GET' && method !== 'HEAD')) statuses.add(409);
  if (schema.params) statuses.add(404);
  if (schema.querystring) statuses.add(422);
  if (schema.body) [409, 413, 415, 422].forEach((s) => statuses.add(s));
  return [...statuses].sort();
}

/** An onRoute hook: adds the error responses a route's schema does not already name. */
export function documentErrorResponses(route: RouteOptions): void {
  if (!route.schema || (route.schema as { hide?: boolean }).hide) return;
  const response = ((route.schema as { response?: Record<string | number, unknown> }).response ??= {});
  for (const status of statusesOf(route)) {
    if (response[status] === undefined) response[status] = errorResponse(DESCRIPTIONS[status]!);
  }
}
