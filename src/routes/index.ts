import type { FastifyInstance } from 'fastify';
import type { RouteDeps } from '../app.js';
import { metaRoutes } from './meta.routes.js';
import { pipelineRoutes } from './pipelines.routes.js';
import { oauthRoutes } from './oauth.routes.js';

/** Every route plugin, in one list. */
export async function routes(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  await app.register(metaRoutes, deps);
  await app.register(oauthRoutes, deps);
  await app.register(pipelineRoutes, deps);
}
