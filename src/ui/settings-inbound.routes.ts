import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { createSourceBody, editSourceBody, sourceLogQuery } from '../domain/inbound/sources.schemas.js';
import {
  createSource,
  deleteSource,
  editSource,
  getSource,
  listSources,
  rotateSecret,
  sourceLog,
  type InboundDeps,
} from '../domain/inbound/sources.service.js';
import { listPipelines } from '../domain/pipelines/pipelines.service.js';
import { SOURCE_CHANGED } from '../routes/inbound.routes.js';
import type { Permission } from '../host/permissions.js';
import type { UiOptions } from './index.js';
import { check, formFromError, parseForm, type FormState } from './forms.js';
import type { Html } from './html.js';
import { sendHtml, viewOf, type View } from './page.js';
import { settingsPage } from './settings.routes.js';
import { PICKER_USERS } from './user-picker.js';
import { INBOUND_PATH, sourceList, sourcePage, type SourcePageData } from './settings-inbound.view.js';

/**
 * Settings → inbound webhook sources. Every action calls the inbound API's own
 * domain operations with its permission (service:webhooks:manage). Create and
 * rotate answer the page with the secret in it; htmx then puts the source's
 * own address in the location bar, so a reload is a plain GET without it.
 */

export const INBOUND_PERMISSION: Permission = 'service:webhooks:manage';

const sourceParams = z.object({ sourceId: z.string().max(100) });
const LOG_LIMIT = 50;

export async function settingsInboundRoutes(app: FastifyInstance, deps: UiOptions): Promise<void> {
  const { db, config, baseUrl, cluster } = deps;
  if (!config.APP_KEY) throw new Error('APP_KEY is required: inbound source secrets are encrypted with it');
  const inbound: InboundDeps = { db, appKey: config.APP_KEY, baseUrl, users: deps.host.users };
  const base = app.prefix;
  const view = (request: FastifyRequest): View => viewOf(request, base);
  const manage = { config: { permission: INBOUND_PERMISSION, page: 'page' as const }, schema: { hide: true } };
  const users = () => deps.host.users.search({ limit: PICKER_USERS });
  const changed = (sourceId: string) => cluster.publish(SOURCE_CHANGED, sourceId);
  const sourceUrl = (id: string) => `${base}${INBOUND_PATH}/${encodeURIComponent(id)}`;

  /** htmx swaps the page body in place; a plain request gets the whole page. */
  function answer(request: FastifyRequest, reply: FastifyReply, v: View, title: string, body: Html, status = 200) {
    if (request.headers['hx-request'] === 'true') return sendHtml(reply, body, status);
    return sendHtml(reply, settingsPage(v, title, INBOUND_PATH, body), status);
  }

  const listPage = async (request: FastifyRequest, reply: FastifyReply, v: View, form?: FormState) =>
    answer(request, reply, v, 'Inbound sources', sourceList(v, await listSources(inbound), await listPipelines(db, v.actor), await users(), form));

  async function showSource(request: FastifyRequest, reply: FastifyReply, v: View, sourceId: string, extra: Partial<SourcePageData> = {}) {
    const source = await getSource(inbound, sourceId);
    const query = sourceLogQuery.safeParse(request.query ?? {});
    const outcome = request.method === 'GET' && query.success ? query.data.outcome : undefined;
    const [pipelines, people, log] = await Promise.all([listPipelines(db, v.actor), users(), sourceLog(inbound, sourceId, LOG_LIMIT, outcome)]);
    return answer(request, reply, v, source.name, sourcePage(v, { source, pipelines, users: people, log, outcome, ...extra }));
  }

  app.get(INBOUND_PATH, manage, async (request, reply) => listPage(request, reply, view(request)));

  app.post(`${INBOUND_PATH}/new`, manage, async (request, reply) => {
    const v = view(request);
    const parsed = parseForm(createSourceBody, request.body);
    if (!parsed.ok) return listPage(request, reply, v, parsed.form);
    let created;
    try {
      created = await createSource(inbound, v.actor, parsed.data.source);
    } catch (error) {
      return listPage(request, reply, v, formFromError(error, request.body));
    }
    const { secret, ...source } = created;
    void reply.header('HX-Push-Url', sourceUrl(source.id));
    return showSource(request, reply, v, source.id, { secret: { value: secret, rotated: false } });
  });

  app.get(`${INBOUND_PATH}/:sourceId`, manage, async (request, reply) => {
    const { sourceId } = check(sourceParams, request.params);
    return showSource(request, reply, view(request), sourceId);
  });

  app.post(`${INBOUND_PATH}/:sourceId/edit`, manage, async (request, reply) => {
    const v = view(request);
    const { sourceId } = check(sourceParams, request.params);
    const parsed = parseForm(editSourceBody, request.body);
    if (!parsed.ok) return showSource(request, reply, v, sourceId, { form: parsed.form });
    try {
      await editSource(inbound, v.actor, sourceId, parsed.data.source);
    } catch (error) {
      return showSource(request, reply, v, sourceId, { form: formFromError(error, request.body) });
    }
    changed(sourceId);
    return reply.redirect(sourceUrl(sourceId), 303);
  });

  for (const [action, enabled] of [['enable', true], ['disable', false]] as const) {
    app.post(`${INBOUND_PATH}/:sourceId/${action}`, manage, async (request, reply) => {
      const v = view(request);
      const { sourceId } = check(sourceParams, request.params);
      await editSource(inbound, v.actor, sourceId, { enabled });
      changed(sourceId);
      return reply.redirect(sourceUrl(sourceId), 303);
    });
  }

  app.post(`${INBOUND_PATH}/:sourceId/rotate`, manage, async (request, reply) => {
    const v = view(request);
    const { sourceId } = check(sourceParams, request.params);
    const { secret } = await rotateSecret(inbound, sourceId);
    changed(sourceId);
    void reply.header('HX-Push-Url', sourceUrl(sourceId));
    return showSource(request, reply, v, sourceId, { secret: { value: secret, rotated: true } });
  });

  app.post(`${INBOUND_PATH}/:sourceId/delete`, manage, async (request, reply) => {
    const { sourceId } = check(sourceParams, request.params);
    await deleteSource(inbound, sourceId);
    changed(sourceId);
    return reply.redirect(`${base}${INBOUND_PATH}`, 303);
  });
}
