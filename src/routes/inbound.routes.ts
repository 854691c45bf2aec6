import type { FastifyError, FastifyRequest } from 'fastify';
import { appKeys } from '../config.js';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { RouteDeps } from './deps.js';
import { createReceiver, type Receiver, type ReceivingSource } from '../domain/inbound/receive.service.js';
import { parseJsonObject, receiveBody } from '../domain/inbound/receive.mapping.js';
import { SIGNATURE_HEADER } from '../domain/inbound/inbound.signature.js';
import { applyFieldMap } from '../domain/inbound/field-map.js';
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
import { createSourceBody, editSourceBody, LOG_OUTCOMES, sourceLogQuery } from '../domain/inbound/sources.schemas.js';
import { toAppError } from '../http/error-handler.js';
import { AppError, PayloadTooLargeError } from '../http/errors.js';
import { actorOf } from '../http/guard.js';
import { successResponse } from '../http/schemas.js';

/** Contract section 7: inbound receives may carry at most 256 KiB. */
export const INBOUND_BODY_LIMIT = 256 * 1024;

const BASE = '/service/settings/inbound-webhooks';
const manage = { permission: 'service:webhooks:manage' } as const;
const tags = ['inbound webhooks'];

const sourceParams = z.object({ sourceId: z.string() });
const sourceJson = z.object({
  id: z.string(),
  name: z.string(),
  pipeline: z.object({ id: z.number(), name: z.string() }),
  stage: z.object({ id: z.number(), name: z.string() }).nullable().describe("where created deals start; null: the pipeline's first stage"),
  owner: z.object({ id: z.number(), name: z.string() }).nullable().describe('who owns created deals; null: nobody'),
  fields: z.record(z.string(), z.string()).describe("deal field → dot path in the sender's JSON it is read from; others are read under their own name"),
  endpointUrl: z.string(),
  enabled: z.boolean(),
  previousSecretExpiresAt: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
  lastReceivedAt: z.string().nullable(),
});
const sourceResponse = { 200: z.object({ source: sourceJson }) };
const withSecret = {
  200: z.object({ source: sourceJson.extend({ secret: z.string().describe('64 lowercase hex characters; shown only in this answer') }) }),
};
const logEntry = z.object({
  id: z.number(),
  receivedAt: z.string(),
  status: z.number(),
  outcome: z.enum(LOG_OUTCOMES),
  error: z.string().nullable(),
  deal: z.object({ id: z.number() }).nullable(),
});
const answer = z.object({
  success: z.literal(true),
  created: z.boolean(),
  deal: z.object({ id: z.number() }),
  contact: z.object({ id: z.number(), created: z.boolean() }).nullable(),
});
const replayHeader = z.string().trim().min(1, 'Must not be empty').max(255, 'Must be at most 255 characters').optional();

/**
 * The receive endpoint lives in its own encapsulated plugin: it reads any
 * content type as raw bytes (the signature covers exactly those), caps them at
 * 256 KiB, and logs every refusal of a known source.
 */
const receiveRoute: FastifyPluginAsyncZod<{ receiver: Receiver }> = async (app, { receiver }) => {
  const sources = new WeakMap<FastifyRequest, ReceivingSource>();
  const raws = new WeakMap<FastifyRequest, Buffer>();

  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: INBOUND_BODY_LIMIT }, (_request, body, done) => done(null, body));

  // Thrown on, so the app's error handler still writes the answer.
  app.setErrorHandler(async (error: FastifyError, request) => {
    const thrown = error.code === 'FST_ERR_CTP_BODY_TOO_LARGE' ? new PayloadTooLargeError(INBOUND_BODY_LIMIT) : error;
    const source = sources.get(request);
    if (source) {
      const mapped = toAppError(thrown as FastifyError);
      const logged = mapped && mapped.statusCode < 500 ? mapped : new AppError(500, 'server_error', 'Something went wrong on our side');
      await receiver.logRejection(source, logged);
    }
    throw thrown;
  });

  app.post(
    `${BASE}/:sourceId/receive`,
    {
      // No credentials: the X-Service-Signature header is checked here (403 when missing or wrong).
      config: { public: true, signed: true },
      bodyLimit: INBOUND_BODY_LIMIT,
      schema: {
        tags,
        summary: 'Receive a signed deal from an external system',
        description:
          'No credentials: the X-Service-Signature header (sha256=<hex HMAC-SHA256 of the raw body, keyed with the source secret>) ' +
          'authenticates the sender. Checks in order: 404 unknown or disabled source, 413 over 256 KiB, 403 signature, ' +
          '422 body, 429 per-source rate. A repeated Idempotency-Key or webhook-id header (else a byte-identical body) within 24 h ' +
          'returns the first answer.',
        security: [],
        // The signature covers the raw bytes of a JSON body; forms are not read here.
        consumes: ['application/json'],
        params: sourceParams,
        headers: z.looseObject({
          'x-service-signature': z.string().optional().describe('sha256=<hex HMAC-SHA256 of the raw body bytes, keyed with the source secret>'),
          'idempotency-key': replayHeader,
          'webhook-id': replayHeader,
        }),
        body: receiveBody,
        response: { 200: answer, 202: z.object({ success: z.literal(true), queued: z.literal(true) }) },
      },
      onRequest: async (request) => {
        sources.set(request, await receiver.source(request.params.sourceId));
      },
      preValidation: async (request) => {
        const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        raws.set(request, raw);
        receiver.authenticate(sources.get(request)!, request.headers[SIGNATURE_HEADER], raw);
        request.body = applyFieldMap(sources.get(request)!.field_map, parseJsonObject(raw));
      },
    },
    async (request, reply) => {
      const key = request.headers['idempotency-key'] ?? request.headers['webhook-id'];
      const result = await receiver.receive(sources.get(request)!, request.body, raws.get(request)!, key);
      // The host was down: the receive is kept and written by the worker later.
      if ('queued' in result) return reply.code(202).send({ success: true as const, queued: true as const });
      if (result.replayed) void reply.header('Idempotent-Replayed', 'true');
      return result.answer;
    },
  );
};

/** Published (to every process, this one included) when a source changes: its cached copy is read again. The settings pages publish it too. */
export const SOURCE_CHANGED = 'inbound-source-changed';

/** Inbound webhook sources and their signed receive endpoint. */
export const inboundRoutes: FastifyPluginAsyncZod<RouteDeps> = async (app, { config, db, host, baseUrl, cluster }) => {
  if (!config.APP_KEY) throw new Error('APP_KEY is required: inbound source secrets are encrypted with it');
  const deps: InboundDeps = { db, appKey: config.APP_KEY, baseUrl, users: host.users };
  const receiver = createReceiver({
    db,
    appKey: appKeys(config),
    ratePerSecond: config.INBOUND_RATE_LIMIT,
    share: () => cluster.size(),
    currency: config.DEFAULT_CURRENCY,
    logger: app.log,
    contacts: host.contacts,
    poolSize: config.DB_POOL_SIZE,
  });
  // A source changed here is read again by every process at once, not after its cache's second.
  const sourceChanged = (sourceId: string) => {
    receiver.forget(sourceId);
    cluster.publish(SOURCE_CHANGED, sourceId);
  };
  // Also from self: a change made by the settings pages reaches this process's receiver only this way (forgetting twice is harmless).
  cluster.on(SOURCE_CHANGED, (sourceId) => receiver.forget(String(sourceId)));

  app.get(
    BASE,
    { config: manage, schema: { tags, summary: 'List inbound sources', response: { 200: z.object({ sources: z.array(sourceJson) }) } } },
    async () => ({ sources: await listSources(deps) }),
  );

  app.post(
    `${BASE}/new`,
    {
      config: manage,
      schema: {
        tags,
        summary: 'Create an inbound source; the answer carries its secret, the only time it is shown',
        body: createSourceBody,
        response: withSecret,
      },
    },
    async (request, reply) => {
      const source = await createSource(deps, actorOf(request), request.body.source);
      void reply.header('Location', `${baseUrl}${BASE}/${source.id}`);
      return { source };
    },
  );

  app.get(
    `${BASE}/:sourceId`,
    { config: manage, schema: { tags, summary: 'Get an inbound source (never its secret)', params: sourceParams, response: sourceResponse } },
    async (request) => ({ source: await getSource(deps, request.params.sourceId) }),
  );

  app.post(
    `${BASE}/:sourceId/edit`,
    {
      config: manage,
      schema: {
        tags,
        summary: 'Rename, repoint (pipeline, stage, owner of created deals) or enable/disable an inbound source',
        params: sourceParams,
        body: editSourceBody,
        response: sourceResponse,
      },
    },
    async (request) => {
      const source = await editSource(deps, actorOf(request), request.params.sourceId, request.body.source);
      sourceChanged(request.params.sourceId);
      return { source };
    },
  );

  const remove = async (request: FastifyRequest<{ Params: { sourceId: string } }>) => {
    await deleteSource(deps, request.params.sourceId);
    sourceChanged(request.params.sourceId);
    return { success: true as const };
  };
  const removeSchema = { tags, summary: 'Delete an inbound source (its deals stay)', params: sourceParams, response: { 200: successResponse } };
  app.delete(`${BASE}/:sourceId`, { config: manage, schema: removeSchema }, remove);
  app.post(`${BASE}/:sourceId/delete`, { config: manage, schema: removeSchema }, remove);

  app.post(
    `${BASE}/:sourceId/rotate`,
    {
      config: manage,
      schema: {
        tags,
        summary: 'Replace the secret; the new one is shown once and the old one keeps working for 24 hours',
        params: sourceParams,
        response: withSecret,
      },
    },
    async (request) => {
      const source = await rotateSecret(deps, request.params.sourceId);
      sourceChanged(request.params.sourceId);
      return { source };
    },
  );

  app.get(
    `${BASE}/:sourceId/log`,
    {
      config: manage,
      schema: {
        tags,
        summary: 'Recent receives of a source, newest first: time, status, outcome, error, deal (filter: outcome)',
        params: sourceParams,
        querystring: sourceLogQuery,
        response: { 200: z.object({ log: z.array(logEntry) }) },
      },
    },
    async (request) => ({ log: await sourceLog(deps, request.params.sourceId, request.query.limit, request.query.outcome) }),
  );

  await app.register(receiveRoute, { receiver });
};
