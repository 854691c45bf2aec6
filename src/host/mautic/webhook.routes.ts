import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyPluginAsync } from 'fastify';
import type { Logger } from 'pino';
import type { Db } from '../../db/database.js';
import { ForbiddenError, UnavailableError, ValidationError } from '../../http/errors.js';
import { tombstoneContacts, upsertContacts } from '../local-copy.js';
import type { ContactRow } from '../port.js';
import { toContactRow } from './contacts.js';

export const WEBHOOK_PATH = '/service/host/mautic/webhook';

/** Mautic signs the exact bytes it sent: base64 HMAC-SHA256 with the webhook's secret. */
export function signatureMatches(raw: Buffer, header: string | undefined, secret: string): boolean {
  if (!header) return false;
  const expected = createHmac('sha256', secret).update(raw).digest();
  const given = Buffer.from(header.trim(), 'base64');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * What Mautic tells us about contacts we copied. A merge reaches us as an
 * update of the winner and a delete of the loser (Mautic has no merge event),
 * so updates and deletes are all there is. Updates only refresh contacts the
 * copy already holds: the copy is of the contacts deals reference, not all of
 * Mautic. Mautic never retries a failed webhook, so this answers 2xx as soon as
 * the copy is written; a row it missed is caught by the refresh-on-read age.
 */
export function mauticWebhookRoutes(options: { db: Db; secret: string | undefined; logger: Logger }): FastifyPluginAsync {
  const { db, secret, logger } = options;
  return async (app) => {
    // Encapsulated in this plugin: the signature covers the raw bytes, so JSON is parsed here after checking it.
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: 1024 * 1024 }, (_request, body, done) => done(null, body));

    app.post(WEBHOOK_PATH, { config: { public: true }, schema: { hide: true } }, async (request, reply) => {
      if (!secret) throw new UnavailableError('MAUTIC_WEBHOOK_SECRET is not set, so Mautic webhooks cannot be verified', 3600);
      const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      if (!signatureMatches(raw, request.headers['webhook-signature'] as string | undefined, secret)) {
        throw new ForbiddenError('Webhook-Signature does not match the body');
      }
      let payload: Record<string, unknown>;
      try {
        payload = JSON.parse(raw.toString('utf8'));
      } catch {
        throw ValidationError.field('body', 'Must be JSON');
      }
      const updates: ContactRow[] = [];
      const deleted: number[] = [];
      for (const [type, events] of Object.entries(payload ?? {})) {
        if (!Array.isArray(events)) continue;
        for (const event of events) {
          if (type === 'mautic.lead_post_delete') {
            const id = Number(event?.id ?? event?.contact?.id);
            if (Number.isInteger(id) && id > 0) deleted.push(id);
          } else if (type === 'mautic.lead_post_save_update' || type === 'mautic.lead_post_save_new') {
            const row = toContactRow(event?.contact);
            if (row) updates.push(row);
          }
        }
      }
      const known = updates.length
        ? new Set((await db.selectFrom('contacts').select('id').where('id', 'in', updates.map((row) => row.id)).execute()).map((row) => row.id))
        : new Set<number>();
      // Later events for the same contact win (a batch from Mautic's queue is in order).
      const latest = new Map(updates.filter((row) => known.has(row.id)).map((row) => [row.id, row]));
      await upsertContacts(db, [...latest.values()].filter((row) => !deleted.includes(row.id)));
      await tombstoneContacts(db, deleted);
      logger.info({ updated: latest.size, deleted: deleted.length }, 'Mautic webhook applied to the contact copy');
      return reply.code(200).send({ success: true });
    });
  };
}
