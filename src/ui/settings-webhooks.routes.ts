import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { deliveryQuery, webhookBody } from '../domain/webhooks/webhooks.schemas.js';
import {
  createWebhook,
  editWebhook,
  getDeliveries,
  getWebhook,
  getWebhooks,
  redeliver,
  removeWebhook,
  rotateWebhookSecret,
  sendTestEvent,
} from '../domain/webhooks/webhooks.service.js';
import { AppError } from '../http/errors.js';
import { hostAdmin, id } from '../http/schemas.js';
import type { Config } from '../config.js';
import type { UiOptions } from './index.js';
import { check, formFromError, parseForm, type FormState } from './forms.js';
import { html, type Html } from './html.js';
import { sendHtml, viewOf, type View } from './page.js';
import { settingsPage } from './settings.routes.js';
import { WEBHOOKS_PATH, webhookList, webhookPage, type WebhookPageData } from './settings-webhooks.view.js';

/**
 * Settings → outbound webhooks (built-in host, WEBHOOK_MODE=builtin). Every
 * action (create, edit, test, disable and enable, rotate the secret, send a
 * delivery again, delete) is the /host/webhooks API's own domain operation, with its permission
 * (host:admin). Under a remote host the pages are absent (its users and
 * webhooks are managed there); when events are forwarded to the host's
 * dispatcher (WEBHOOK_MODE=forward) the page says so instead.
 */

/** Whether this service sends to its own subscriptions (else the pages are not registered). */
export const webhookPagesEnabled = (config: Pick<Config, 'HOST_PLATFORM' | 'WEBHOOK_MODE'>) =>
  config.HOST_PLATFORM === 'builtin' && config.WEBHOOK_MODE === 'builtin';

const webhookParams = z.object({ id });
const deliveryParams = z.object({ id, deliveryId: id });
const PAGE_SIZE = 20;

/** The checked events of a submitted form, to keep them checked when it comes back with errors. */
function chosenEvents(body: unknown): string[] {
  const events = (body as { events?: unknown } | undefined)?.events;
  const list = Array.isArray(events) ? events : typeof events === 'string' ? [events] : [];
  return list.filter((e): e is string => typeof e === 'string');
}

export async function settingsWebhookRoutes(app: FastifyInstance, deps: UiOptions): Promise<void> {
  const { db, config } = deps;
  if (config.HOST_PLATFORM !== 'builtin') return;
  const base = app.prefix;
  const view = (request: FastifyRequest): View => viewOf(request, base);
  const admin = { config: { ...hostAdmin, page: 'page' as const }, schema: { hide: true } };
  if (!webhookPagesEnabled(config)) {
    app.get(WEBHOOKS_PATH, admin, async (request, reply) =>
      sendHtml(
        reply,
        settingsPage(
          view(request),
          'Outbound webhooks',
          WEBHOOKS_PATH,
          html`<section class="panel"><h1>Outbound webhooks</h1>
  <p>This service hands every event to the host platform's dispatcher (<code>WEBHOOK_MODE=forward</code>, <code>HOST_WEBHOOK_URL</code>),
  which delivers it to the host's own subscribers. Subscriptions, their delivery logs and retries are managed there.</p></section>`,
        ),
      ),
    );
    return;
  }
  const webhookUrl = (webhookId: number) => `${base}${WEBHOOKS_PATH}/${webhookId}`;

  function answer(request: FastifyRequest, reply: FastifyReply, v: View, title: string, body: Html, status = 200) {
    if (request.headers['hx-request'] === 'true') return sendHtml(reply, body, status);
    return sendHtml(reply, settingsPage(v, title, WEBHOOKS_PATH, body), status);
  }

  const listPage = async (request: FastifyRequest, reply: FastifyReply, v: View, form?: FormState, chosen?: string[]) =>
    answer(request, reply, v, 'Outbound webhooks', webhookList(v, await getWebhooks(db), form, chosen));

  async function showWebhook(request: FastifyRequest, reply: FastifyReply, v: View, webhookId: number, extra: Partial<WebhookPageData> = {}, status = 200) {
    const webhook = await getWebhook(db, webhookId);
    const parsed = request.method === 'GET' ? deliveryQuery.safeParse(request.query ?? {}) : undefined;
    const query = parsed?.success ? parsed.data : { page: 1, limit: PAGE_SIZE };
    const deliveries = await getDeliveries(db, webhookId, { page: query.page, limit: PAGE_SIZE, status: query.status });
    return answer(request, reply, v, webhook.name, webhookPage(v, { webhook, deliveries, status: query.status, ...extra }), status);
  }

  /** Runs an action; a refused one (409 disabled, 404) shows the page with the reason in words. */
  async function act(request: FastifyRequest, reply: FastifyReply, webhookId: number, run: () => Promise<unknown>) {
    const v = view(request);
    try {
      await run();
    } catch (error) {
      if (!(error instanceof AppError) || error.statusCode >= 500 || error.statusCode === 404) throw error;
      return showWebhook(request, reply, v, webhookId, { message: error.message }, error.statusCode);
    }
    return reply.redirect(webhookUrl(webhookId), 303);
  }

  app.get(WEBHOOKS_PATH, admin, async (request, reply) => listPage(request, reply, view(request)));

  app.post(`${WEBHOOKS_PATH}/new`, admin, async (request, reply) => {
    const v = view(request);
    const parsed = parseForm(webhookBody, request.body);
    if (!parsed.ok) return listPage(request, reply, v, parsed.form, chosenEvents(request.body));
    let created;
    try {
      created = await createWebhook(db, config, v.actor, parsed.data);
    } catch (error) {
      return listPage(request, reply, v, formFromError(error, request.body), chosenEvents(request.body));
    }
    void reply.header('HX-Push-Url', webhookUrl(created.id));
    return showWebhook(request, reply, v, created.id, { secret: created.secret });
  });

  app.get(`${WEBHOOKS_PATH}/:id`, admin, async (request, reply) => {
    const { id: webhookId } = check(webhookParams, request.params);
    return showWebhook(request, reply, view(request), webhookId);
  });

  app.post(`${WEBHOOKS_PATH}/:id/edit`, admin, async (request, reply) => {
    const v = view(request);
    const { id: webhookId } = check(webhookParams, request.params);
    const parsed = parseForm(webhookBody.pick({ name: true, url: true, events: true }), request.body);
    const chosen = chosenEvents(request.body);
    if (!parsed.ok) return showWebhook(request, reply, v, webhookId, { form: parsed.form, chosen });
    try {
      await editWebhook(db, config, webhookId, parsed.data);
    } catch (error) {
      return showWebhook(request, reply, v, webhookId, { form: formFromError(error, request.body), chosen });
    }
    return reply.redirect(webhookUrl(webhookId), 303);
  });

  app.post(`${WEBHOOKS_PATH}/:id/test`, admin, async (request, reply) => {
    const { id: webhookId } = check(webhookParams, request.params);
    return act(request, reply, webhookId, () => sendTestEvent(db, webhookId));
  });

  for (const [action, enabled] of [['enable', true], ['disable', false]] as const) {
    app.post(`${WEBHOOKS_PATH}/:id/${action}`, admin, async (request, reply) => {
      const { id: webhookId } = check(webhookParams, request.params);
      return act(request, reply, webhookId, () => editWebhook(db, config, webhookId, { enabled }));
    });
  }

  // The new secret is in this answer only, like a new subscription's; the previous one keeps signing beside it for a while.
  app.post(`${WEBHOOKS_PATH}/:id/rotate`, admin, async (request, reply) => {
    const { id: webhookId } = check(webhookParams, request.params);
    const { secret } = await rotateWebhookSecret(db, config, webhookId);
    // htmx puts the subscription's own address in the location bar: a reload is a plain GET, without the secret.
    void reply.header('HX-Push-Url', webhookUrl(webhookId));
    return showWebhook(request, reply, view(request), webhookId, { secret, rotated: true });
  });

  app.post(`${WEBHOOKS_PATH}/:id/deliveries/:deliveryId/redeliver`, admin, async (request, reply) => {
    const { id: webhookId, deliveryId } = check(deliveryParams, request.params);
    return act(request, reply, webhookId, () => redeliver(db, webhookId, deliveryId));
  });

  app.post(`${WEBHOOKS_PATH}/:id/delete`, admin, async (request, reply) => {
    const { id: webhookId } = check(webhookParams, request.params);
    await removeWebhook(db, webhookId);
    return reply.redirect(`${base}${WEBHOOKS_PATH}`, 303);
  });
}
