import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { RouteDeps } from './deps.js';
import { addContact, removeContact } from '../domain/deals/committee.service.js';
import { DEAL_PERMISSIONS } from '../domain/deals/deal-access.js';
import { committeeBody, memberJson } from '../domain/deals/deals.schemas.js';
import { actorOf } from '../http/guard.js';
import { id, idParams, successResponse } from '../http/schemas.js';

/** The buying committee: host contacts on a deal, with a role and at most one primary. */
export const dealCommitteeRoutes: FastifyPluginAsyncZod<RouteDeps> = async (app, { db, host }) => {
  const tags = ['committee'];
  const config = { permission: DEAL_PERMISSIONS.edit };

  app.post(
    '/service/:id/contacts',
    {
      config,
      schema: {
        tags,
        summary: 'Add a contact to the buying committee (again: update role/primary)',
        params: idParams,
        body: committeeBody,
        response: { 200: z.object({ contact: memberJson }) },
      },
    },
    async (request) => {
      const { contact_id: contactId, role, is_primary: isPrimary } = request.body;
      return { contact: await addContact(db, host, actorOf(request), request.params.id, { contactId, role, isPrimary }) };
    },
  );

  for (const [method, url] of [
    ['DELETE', '/service/:id/contacts/:contactId'],
    ['POST', '/service/:id/contacts/:contactId/remove'],
  ] as const) {
    app.route({
      method,
      url,
      config,
      schema: {
        tags,
        summary: 'Remove a contact from the buying committee',
        params: z.object({ id, contactId: id }),
        response: { 200: successResponse },
      },
      handler: async (request) => {
        await removeContact(db, actorOf(request), request.params.id, request.params.contactId);
        return { success: true as const };
      },
    });
  }
};
