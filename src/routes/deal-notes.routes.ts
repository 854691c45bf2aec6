import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { RouteDeps } from './deps.js';
import { DEAL_PERMISSIONS } from '../domain/deals/deal-access.js';
import { noteBody, noteJson } from '../domain/deals/deals.schemas.js';
import { addNote, deleteNote, editNote, getNote } from '../domain/deals/notes.service.js';
import { actorOf } from '../http/guard.js';
import { id, idParams, successResponse } from '../http/schemas.js';

/** Notes: HTML sanitized with an allow-list before it is stored; edits and deletes need edit permission on the deal. */
export const dealNoteRoutes: FastifyPluginAsyncZod<RouteDeps> = async (app, { db, baseUrl }) => {
  const tags = ['notes'];
  const noteResponse = { 200: z.object({ note: noteJson }) };
  const noteParams = z.object({ noteId: id });

  app.post(
    '/service/:id/notes',
    {
      config: { permission: DEAL_PERMISSIONS.edit },
      schema: { tags, summary: 'Add a note to a deal', params: idParams, body: noteBody, response: noteResponse },
    },
    async (request, reply) => {
      const note = await addNote(db, actorOf(request), request.params.id, request.body.note.body);
      void reply.header('Location', `${baseUrl}/service/notes/${note.id}`);
      return { note };
    },
  );

  app.get(
    '/service/notes/:noteId',
    {
      config: { permission: DEAL_PERMISSIONS.view },
      schema: { tags, summary: 'Get a note', params: noteParams, response: noteResponse },
    },
    async (request) => ({ note: await getNote(db, actorOf(request), request.params.noteId) }),
  );

  for (const [method, url] of [['POST', '/service/notes/:noteId/edit'], ['PATCH', '/service/notes/:noteId']] as const) {
    app.route({
      method,
      url,
      config: { permission: DEAL_PERMISSIONS.edit },
      schema: { tags, summary: 'Edit a note', params: noteParams, body: noteBody, response: noteResponse },
      handler: async (request) => ({ note: await editNote(db, actorOf(request), request.params.noteId, request.body.note.body) }),
    });
  }

  for (const [method, url] of [['DELETE', '/service/notes/:noteId'], ['POST', '/service/notes/:noteId/delete']] as const) {
    app.route({
      method,
      url,
      config: { permission: DEAL_PERMISSIONS.edit },
      schema: { tags, summary: 'Delete a note', params: noteParams, response: { 200: successResponse } },
      handler: async (request) => {
        await deleteNote(db, actorOf(request), request.params.noteId);
        return { success: true as const };
      },
    });
  }
};
