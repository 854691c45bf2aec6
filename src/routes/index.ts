import type { FastifyInstance } from 'fastify';
import type { RouteDeps } from '../app.js';
import { dealRoutes } from './deals.routes.js';
import { hostRoutes } from './host.routes.js';
import { inboundRoutes } from './inbound.routes.js';
import { metaRoutes } from './meta.routes.js';
import { oauthRoutes } from './oauth.routes.js';
import { pipelineRoutes } from './pipelines.routes.js';
import { webhookRoutes } from './webhooks.routes.js';

/** Every route plugin, in one list. */
export async function routes(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  await app.register(metaRoutes, deps);
  await app.register(oauthRoutes, deps);
  await app.register(hostRoutes, deps);
  await app.register(pipelineRoutes, deps);
  await app.register(dealRoutes, deps);
  await app.register(inboundRoutes, deps);
  await app.register(webhookRoutes, deps);
}
