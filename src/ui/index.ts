import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { RouteDeps } from '../routes/deps.js';
import type { PageSessions } from '../http/session.js';
import { boardRoutes } from './board.routes.js';
import { dealPageRoutes } from './deal.routes.js';
import { userPickerRoutes } from './user-picker.js';
import { forecastRoutes } from './forecast.routes.js';
import { loginRoutes } from './login.routes.js';
import { settingsInboundRoutes } from './settings-inbound.routes.js';
import { settingsWebhookRoutes } from './settings-webhooks.routes.js';
import type { PageTable } from './negotiation.js';
import { tableRoutes } from './table.routes.js';
import { settingsPipelineRoutes } from './settings-pipelines.routes.js';
import { settingsRoutes } from './settings.routes.js';

export { pageNegotiation, type PageTable } from './negotiation.js';

/**
 * The sales pages: server-rendered HTML calling the same domain services as
 * the API, htmx for partial updates and SortableJS for drag and drop, both
 * served from node_modules by this app (no CDN, no build step).
 */

export interface UiOptions extends RouteDeps {
  sessions: PageSessions;
  pages: PageTable;
}

const require = createRequire(import.meta.url);
// The CSS and JS are plain files beside this module in src/; a compiled build (dist/src/ui) reads them from src/ too,
// since tsc copies no assets and the pages need no build step of their own.
const ASSET_DIRS = [new URL('./assets/', import.meta.url), new URL('../../../src/ui/assets/', import.meta.url)];
const own = (name: string) => {
  const found = ASSET_DIRS.map((dir) => new URL(name, dir)).find((file) => existsSync(file));
  if (!found) throw new Error(`UI asset ${name} not found in ${ASSET_DIRS.map(String).join(' or ')}`);
  return found;
};

const ASSETS: Record<string, { file: string | URL; type: string }> = {
  'htmx.min.js': { file: require.resolve('htmx.org/dist/htmx.min.js'), type: 'text/javascript' },
  'sortable.min.js': { file: require.resolve('sortablejs/Sortable.min.js'), type: 'text/javascript' },
  'uplot.min.js': { file: require.resolve('uplot/dist/uPlot.iife.min.js'), type: 'text/javascript' },
  'uplot.min.css': { file: require.resolve('uplot/dist/uPlot.min.css'), type: 'text/css' },
  'app.js': { file: own('app.js'), type: 'text/javascript' },
  'forecast.js': { file: own('forecast.js'), type: 'text/javascript' },
  'app.css': { file: own('app.css'), type: 'text/css' },
  'settings.js': { file: own('settings.js'), type: 'text/javascript' },
};

export async function uiPages(app: FastifyInstance, options: UiOptions): Promise<void> {
  const base = app.prefix;
  for (const [name, asset] of Object.entries(ASSETS)) {
    // Read once at start-up; the ETag lets browsers revalidate cheaply.
    const body = readFileSync(asset.file);
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 16)}"`;
    app.get(`/service/assets/${name}`, { config: { public: true }, schema: { hide: true } }, async (request, reply) => {
      void reply.header('ETag', etag).header('Cache-Control', 'no-cache').header('X-Content-Type-Options', 'nosniff');
      if (request.headers['if-none-match'] === etag) return reply.code(304).send();
      return reply.type(`${asset.type}; charset=utf-8`).send(body);
    });
  }

  app.get('/', { config: { public: true }, schema: { hide: true } }, async (_request, reply) => reply.redirect(`${base}/service/board`, 303));

  await app.register(loginRoutes, options);
  await app.register(boardRoutes, options);
  await app.register(dealPageRoutes, options);
  await app.register(userPickerRoutes, options);
  await app.register(tableRoutes, options);
  await app.register(forecastRoutes, options);
  await app.register(settingsRoutes, options);
  await app.register(settingsPipelineRoutes, options);
  // Users, roles, API credentials and your own password exist only where users are managed here.
  if (options.host.pages) await app.register(options.host.pages, options);
  await app.register(settingsInboundRoutes, options);
  await app.register(settingsWebhookRoutes, options);
}
