import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { RouteDeps } from './deps.js';
import { EVENT_NAMES } from '../events/events.js';
import { isValidSecret } from '../events/signing.js';
import { TEST_EVENT } from '../events/test-event.js';
import {
  createWebhook,
  editWebhook,
  getDeliveries,
  getDelivery,
  getWebhook,
  getWebhooks,
  redeliver,
  removeWebhook,
  rotateWebhookSecret,
  sendTestEvent,
} from '../domain/webhooks/webhooks.service.js';
import { actorOf } from '../http/guard.js';
import { formList } from '../http/form.js';
import { bool, hostAdmin, id, idParams, isoDate, nullable, pageFields, pageQuery, successResponse, text, timestamps } from '../http/schemas.js';

// One string schema (not a pipe), so the document publishes the URL format with the length.
const url = z.string().trim().max(2048, 'Must be at most 2048 characters').url({ protocol: /^https?$/, message: 'Must be an http or https URL' });
/** `events=` or a lone `events[]=` from a form mean none, and are refused as such. */
const events = formList(z.enum(EVENT_NAMES, { message: `Must be one of ${EVENT_NAMES.join(', ')}` }), { min: [1, 'Select at least one event'] });
const SECRET_MESSAGE = 'Must be whsec_ followed by the base64 of 24 to 64 random bytes';
/** whsec_ + 32 to 88 base64 characters (24 to 64 bytes), published as the pattern. */
const SECRET_SHAPE = /^whsec_(?=[A-Za-z0-9+/=]{32,88}$)[A-Za-z0-9+/]+={0,2}$/;
const secret = nullable(
  z
    .string()
    .trim()
    .regex(SECRET_SHAPE, SECRET_MESSAGE)
    // The bytes' count and canonical base64, once the shape is right (one message per value).
    .refine((value) => !SECRET_SHAPE.test(value) || isValidSecret(value), SECRET_MESSAGE),
).optional();

const webhookBody = z.object({ name: text(1, 255), url, events, secret, enabled: bool.optional() });
const webhookJson = z.object({
  id: z.number(),
  name: z.string(),
  url: z.string(),
  events: z.array(z.string()),
  enabled: z.boolean(),
  disabledReason: z.string().nullable(),
  disabledAt: z.string().nullable(),
  failingSince: z.string().nullable(),
  previousSecretValidUntil: z.string().nullable(),
  ...timestamps,
});
const withSecret = { 200: z.object({ webhook: webhookJson.extend({ secret: z.string() }) }) };
const webhookResponse = { 200: z.object({ webhook: webhookJson }) };

const attemptJson = z.object({
  id: z.number(),
  attemptedAt: z.string(),
  statusCode: z.number().nullable(),
  durationMs: z.number(),
  response: z.string().nullable(),
  error: z.string().nullable(),
});
const deliveryJson = z.object({
  id: z.number(),
  eventId: z.string(),
  event: z.string(),
  status: z.enum(['pending', 'succeeded', 'failed']),
  attemptCount: z.number(),
  nextAttemptAt: z.string().nullable(),
  lastStatusCode: z.number().nullable(),
  lastError: z.string().nullable(),
  deliveredAt: z.string().nullable(),
  attempts: z.array(attemptJson),
  ...timestamps,
});
const deliveryResponse = { 200: z.object({ delivery: deliveryJson.extend({ payload: z.record(z.string(), z.unknown()) }) }) };
const deliveryParams = z.object({ id, deliveryId: id });
const deliveryQuery = pageQuery.extend({
  status: z.enum(['pending', 'succeeded', 'failed']).optional(),
  event: z.enum([...EVENT_NAMES, TEST_EVENT]).optional(),
  since: z
    .union([z.iso.datetime({ offset: true }), isoDate], { message: 'Must be an ISO 8601 timestamp or a YYYY-MM-DD date' })
    .transform((value) => new Date(value))
    .optional(),
});
const tags = ['host: webhooks'];

/** Outbound webhook subscriptions of the built-in host, deliveries and replays (host:admin). */
export const webhookRoutes: FastifyPluginAsyncZod<RouteDeps> = async (app, { db, config, baseUrl }) => {
  app.get(
    '/host/webhooks',
    { config: hostAdmin, schema: { tags, summary: 'List webhook subscriptions', response: { 200: z.object({ webhooks: z.array(webhookJson) }) } } },
    async () => ({ webhooks: await getWebhooks(db) }),
  );

  app.get(
    '/host/webhooks/:id',
    { config: hostAdmin, schema: { tags, summary: 'Get a webhook subscription (never its secret)', params: idParams, response: webhookResponse } },
    async (request) => ({ webhook: await getWebhook(db, request.params.id) }),
  );

  app.post(
    '/host/webhooks/new',
    {
      config: hostAdmin,
      schema: {
        tags,
        summary: 'Subscribe a URL to events; the signing secret (given or generated) is shown this once',
        body: webhookBody,
        response: withSecret,
      },
    },
    async (request, reply) => {
      const webhook = await createWebhook(db, config, actorOf(request), request.body);
      void reply.header('Location', `${baseUrl}/host/webhooks/${webhook.id}`);
      return { webhook };
    },
  );

  app.post(
    '/host/webhooks/:id/edit',
    {
      config: hostAdmin,
      schema: {
        tags,
        summary: 'Edit a subscription; enabled=true re-enables it, a new secret rotates (the old one signs for 24 h more)',
        params: idParams,
        body: webhookBody.partial(),
        response: webhookResponse,
      },
    },
    async (request) => ({ webhook: await editWebhook(db, config, request.params.id, request.body) }),
  );

  app.post(
    '/host/webhooks/:id/rotate',
    {
      config: hostAdmin,
      schema: { tags, summary: 'Generate a new signing secret, shown once; the old one signs for 24 h more', params: idParams, response: withSecret },
    },
    async (request) => ({ webhook: await rotateWebhookSecret(db, config, request.params.id) }),
  );

  app.delete(
    '/host/webhooks/:id',
    { config: hostAdmin, schema: { tags, summary: 'Delete a subscription and its delivery log', params: idParams, response: { 200: successResponse } } },
    async (request) => {
      await removeWebhook(db, request.params.id);
      return { success: true as const };
    },
  );

  app.get(
    '/host/webhooks/:id/deliveries',
    {
      config: hostAdmin,
      schema: {
        tags,
        summary: 'Delivery log, newest first, with every attempt (filters: status, event, since)',
        params: idParams,
        querystring: deliveryQuery,
        response: { 200: z.object({ ...pageFields, deliveries: z.array(deliveryJson) }) },
      },
    },
    async (request) => getDeliveries(db, request.params.id, request.query),
  );

  app.get(
    '/host/webhooks/:id/deliveries/:deliveryId',
    { config: hostAdmin, schema: { tags, summary: 'One delivery with its payload and attempts', params: deliveryParams, response: deliveryResponse } },
    async (request) => ({ delivery: await getDelivery(db, request.params.id, request.params.deliveryId) }),
  );

  app.post(
    '/host/webhooks/:id/deliveries/:deliveryId/redeliver',
    {
      config: hostAdmin,
      schema: {
        tags,
        summary: 'Send a delivery again (same event id) with a fresh retry cycle',
        params: deliveryParams,
        response: deliveryResponse,
      },
    },
    async (request) => ({ delivery: await redeliver(db, request.params.id, request.params.deliveryId) }),
  );

  app.post(
    '/host/webhooks/:id/test',
    {
      config: hostAdmin,
      schema: { tags, summary: `Queue a ${TEST_EVENT} event for this subscription only`, params: idParams, response: deliveryResponse },
    },
    async (request) => ({ delivery: await sendTestEvent(db, request.params.id) }),
  );
};
