import type { FastifyInstance } from 'fastify';
import type { RouteDeps } from './deps.js';
import { dealRoutes } from './deals.routes.js';
import { inboundRoutes } from './inbound.routes.js';
import { mcpRoutes } from './mcp.routes.js';
import { metaRoutes } from './meta.routes.js';
import { pipelineRoutes } from './pipelines.routes.js';
import { webhookRoutes } from './webhooks.routes.js';

const FORGET_LOGINS = 'forget-logins';

/** After users, roles or credentials change: this process and every other one on the database drop their cached logins. */
export function forgetLogins(deps: Pick<RouteDeps, 'host' | 'cluster'>): void {
  deps.host.auth.forget();
  deps.cluster.publish(FORGET_LOGINS);
}

/** Every route plugin, in one list. */
export async function routes(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  await app.register(metaRoutes, deps);
  // The host's own routes (the built-in host's token endpoint and /host/* management).
  deps.cluster.on(FORGET_LOGINS, (_data, fromSelf) => fromSelf || deps.host.auth.forget());
  if (deps.host.routes) await app.register(deps.host.routes, { baseUrl: deps.baseUrl, forgetLogins: () => forgetLogins(deps) });
  await app.register(pipelineRoutes, deps);
  await app.register(dealRoutes, deps);
  await app.register(inboundRoutes, deps);
  await app.register(webhookRoutes, deps);
  await app.register(mcpRoutes, deps);
}
