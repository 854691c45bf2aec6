import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { BuiltinRouteDeps as RouteDeps } from './deps.js';
import { createContact, editContact, getContact, getContacts, removeContact } from '../contacts.service.js';
import { hostAdmin, idParams, nullable, pageFields, searchQuery, successResponse, text, timestamps } from '../../../http/schemas.js';

// One string schema (not a pipe), so the document publishes the email format with the length.
const email = z.string().trim().max(255, 'Must be at most 255 characters').email('Must be an email address');
const optionalText = nullable(text(1, 255)).optional();
const contactBody = z.object({ email, first_name: optionalText, last_name: optionalText, company: optionalText });
const contactJson = z.object({
  id: z.number(),
  email: z.string(),
  first_name: z.string().nullable(),
  last_name: z.string().nullable(),
  company: z.string().nullable(),
  ...timestamps,
});
const contactResponse = { 200: z.object({ contact: contactJson }) };
const tags = ['host: contacts'];

/** Contacts of the built-in host: the people deals' buying committees are made of. */
export const contactRoutes: FastifyPluginAsyncZod<RouteDeps> = async (app, { db, baseUrl }) => {
  app.get(
    '/host/contacts',
    {
      config: hostAdmin,
      schema: {
        tags,
        summary: 'List contacts (search: email or name)',
        querystring: searchQuery,
        response: { 200: z.object({ ...pageFields, contacts: z.array(contactJson) }) },
      },
    },
    async (request) => getContacts(db, request.query),
  );

  app.get(
    '/host/contacts/:id',
    { config: hostAdmin, schema: { tags, summary: 'Get a contact', params: idParams, response: contactResponse } },
    async (request) => ({ contact: await getContact(db, request.params.id) }),
  );

  app.post(
    '/host/contacts/new',
    { config: hostAdmin, schema: { tags, summary: 'Create a contact (409 when the email exists, any letter case)', body: contactBody, response: contactResponse } },
    async (request, reply) => {
      const contact = await createContact(db, request.body);
      void reply.header('Location', `${baseUrl}/host/contacts/${contact.id}`);
      return { contact };
    },
  );

  app.post(
    '/host/contacts/:id/edit',
    { config: hostAdmin, schema: { tags, summary: 'Edit a contact', params: idParams, body: contactBody.partial(), response: contactResponse } },
    async (request) => ({ contact: await editContact(db, request.params.id, request.body) }),
  );

  app.delete(
    '/host/contacts/:id',
    {
      config: hostAdmin,
      schema: { tags, summary: 'Delete a contact (and its places on buying committees)', params: idParams, response: { 200: successResponse } },
    },
    async (request) => {
      await removeContact(db, request.params.id);
      return { success: true as const };
    },
  );
};
