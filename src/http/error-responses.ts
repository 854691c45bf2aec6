import type { RouteOptions } from 'fastify';
import { z } from 'zod';

/**
 * Every operation's OpenAPI entry lists the error statuses it can answer, each
 * with the contract's error body, so a generated client can type its errors.
 * Which statuses follow from what the route declares: credentials (401, and
 * 429 for the failed-login limit), a permission (403), path ids (404), a body
 * (409, 413, 415, 422), a query (422); and 503 when the database is down.
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
  .describe('The error body of every failure: {"errors":[{"code","message","details","type"}]}');

const DESCRIPTIONS: Record<number, string> = {
  401: 'No or wrong credentials',
  403: 'Not allowed (permission, visibility, or a cross-site request)',
  404: 'Not found',
  405: 'Method not allowed on this path (Allow lists those that are)',
  409: 'Conflicts with the current state (a duplicate, a pipeline with deals, ...)',
  413: 'Body too large',
  415: 'Unsupported content type: send application/json or application/x-www-form-urlencoded',
  422: 'Invalid input; details name each field as sent (deal[title])',
  429: 'Too many requests (failed logins, or an inbound source over its rate); see Retry-After',
  503: 'The database (or the host platform) is unavailable; see Retry-After',
};

function statusesOf(route: RouteOptions): number[] {
  const config = (route.config ?? {}) as { public?: boolean; permission?: unknown };
  const schema = (route.schema ?? {}) as { params?: unknown; body?: unknown; querystring?: unknown };
  const statuses = new Set<number>([503]);
  if (!config.public) [401, 429].forEach((s) => statuses.add(s));
  if (config.permission) statuses.add(403);
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
    if (response[status] === undefined) response[status] = errorBodySchema.describe(DESCRIPTIONS[status]!);
  }
}
