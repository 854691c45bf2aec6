import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { addContact, removeContact } from '../domain/deals/committee.service.js';
import { DEAL_PERMISSIONS } from '../domain/deals/deal-access.js';
import { committeeBody, createTaskBody, noteBody, stageMoveBody, toDealInput, updateDealBody } from '../domain/deals/deals.schemas.js';
import { getDeal, moveDealStage, updateDealAsActor } from '../domain/deals/deals.service.js';
import { stageHistory } from '../domain/deals/history.service.js';
import { addNote } from '../domain/deals/notes.service.js';
import { completeTask, createTask, deleteTask, getTask, reopenTask } from '../domain/deals/tasks.service.js';
import { getPipeline } from '../domain/pipelines/pipelines.service.js';
import { id } from '../http/schemas.js';
import type { UiOptions } from './index.js';
import { check, formFromError, parseForm, type FormState } from './forms.js';
import { html, type Html } from './html.js';
import {
  committeeSection,
  contactResults,
  dealHeader,
  dealPage,
  detailsSection,
  historySection,
  notesSection,
  stageSection,
  tasksSection,
} from './deal.view.js';
import { layout, sendHtml, toastHeader, viewOf, type View } from './page.js';
import { PICKER_USERS } from './user-picker.js';

/**
 * The deal page and its in-place forms. Each form posts the contract's body
 * format, runs the API's own operation, and answers the section it changed
 * (with the form refilled and errors next to the inputs when it failed).
 */

const dealParams = z.object({ id });
const memberParams = z.object({ id, contactId: id });
const searchQuery = z.object({ q: z.string().trim().max(100).default('') });

export async function dealPageRoutes(app: FastifyInstance, deps: UiOptions): Promise<void> {
  const { db, host } = deps;
  const base = app.prefix;
  const view = (request: FastifyRequest): View => viewOf(request, base);
  const edit = { config: { permission: DEAL_PERMISSIONS.edit, page: 'page' as const }, schema: { hide: true } };
  const users = () => host.users.search({ limit: PICKER_USERS });
  const load = (v: View, dealId: number) => getDeal(db, host, v.actor, dealId);

  // Browsers asking GET /service/{id}/view for HTML get this page (negotiation.ts); API clients keep the JSON.
  deps.pages.set('/service/:id/view', async (request, reply) => {
    const v = view(request);
    const { id: dealId } = check(dealParams, request.params);
    const deal = await load(v, dealId);
    const [pipeline, history, people] = await Promise.all([getPipeline(db, v.actor, deal.pipeline.id), stageHistory(db, v.actor, dealId), users()]);
    return sendHtml(reply, layout(v, deal.title, dealPage(v, { deal, pipeline, history, users: people })));
  });

  /** Runs a write; on a refused one, answers the section again with what was typed and why. */
  async function section(
    request: FastifyRequest,
    reply: FastifyReply,
    write: (v: View) => Promise<unknown>,
    render: (v: View, dealId: number, form?: FormState) => Promise<Html>,
    dealId: number,
  ) {
    const v = view(request);
    try {
      await write(v);
    } catch (error) {
      return sendHtml(reply, await render(v, dealId, formFromError(error, request.body)));
    }
    return sendHtml(reply, await render(v, dealId));
  }

  const committee = async (v: View, dealId: number, form?: FormState) => committeeSection(v, await load(v, dealId), form);
  const notes = async (v: View, dealId: number, form?: FormState) => notesSection(v, await load(v, dealId), form);
  const tasks = async (v: View, dealId: number, form?: FormState) => tasksSection(v, await load(v, dealId), await users(), form);

  app.post('/service/ui/deals/:id/edit', edit, async (request, reply) => {
    const v = view(request);
    const { id: dealId } = check(dealParams, request.params);
    const parsed = parseForm(updateDealBody, request.body);
    let form: FormState | undefined = parsed.ok ? undefined : parsed.form;
    if (parsed.ok) {
      try {
        await updateDealAsActor(db, host, v.actor, dealId, toDealInput(parsed.data.deal));
      } catch (error) {
        form = formFromError(error, request.body);
      }
    }
    const deal = await load(v, dealId);
    return sendHtml(reply, html`${detailsSection(v, deal, await users(), form, !form)}${dealHeader(deal, true)}`);
  });

  app.post('/service/ui/deals/:id/stage', edit, async (request, reply) => {
    const v = view(request);
    const { id: dealId } = check(dealParams, request.params);
    const parsed = parseForm(stageMoveBody, request.body);
    let form: FormState | undefined = parsed.ok ? undefined : parsed.form;
    if (parsed.ok) {
      try {
        const moved = await moveDealStage(db, v.actor, dealId, { stageId: parsed.data.stage_id, lostReason: parsed.data.lost_reason });
        toastHeader(reply, `Moved to ${moved.stage.name}`);
      } catch (error) {
        form = formFromError(error, request.body);
      }
    }
    const deal = await load(v, dealId);
    const pipeline = await getPipeline(db, v.actor, deal.pipeline.id);
    const history = await stageHistory(db, v.actor, dealId);
    return sendHtml(reply, html`${stageSection(v, deal, pipeline, form)}${dealHeader(deal, true)}${historySection(history, true)}`);
  });

  app.get('/service/ui/deals/:id/contacts/search', { config: { permission: DEAL_PERMISSIONS.view, page: 'page' }, schema: { hide: true } }, async (request, reply) => {
    const v = view(request);
    const { id: dealId } = check(dealParams, request.params);
    const { q } = check(searchQuery, request.query);
    if (q.length < 2) return sendHtml(reply, html`<p class="muted">Type at least two letters.</p>`);
    return sendHtml(reply, contactResults(v, dealId, await host.contacts.search({ search: q, limit: 10 })));
  });

  app.post('/service/ui/deals/:id/contacts', edit, async (request, reply) => {
    const { id: dealId } = check(dealParams, request.params);
    return section(request, reply, async (v) => {
      const body = check(committeeBody, request.body);
      await addContact(db, host, v.actor, dealId, { contactId: body.contact_id, role: body.role ?? null, isPrimary: body.is_primary ?? false });
    }, committee, dealId);
  });

  app.post('/service/ui/deals/:id/contacts/:contactId/primary', edit, async (request, reply) => {
    const { id: dealId, contactId } = check(memberParams, request.params);
    // No role: the one on file stays.
    return section(request, reply, (v) => addContact(db, host, v.actor, dealId, { contactId, isPrimary: true }), committee, dealId);
  });

  app.post('/service/ui/deals/:id/contacts/:contactId/remove', edit, async (request, reply) => {
    const { id: dealId, contactId } = check(memberParams, request.params);
    return section(request, reply, (v) => removeContact(db, v.actor, dealId, contactId), committee, dealId);
  });

  app.post('/service/ui/deals/:id/notes', edit, async (request, reply) => {
    const { id: dealId } = check(dealParams, request.params);
    return section(request, reply, async (v) => addNote(db, v.actor, dealId, check(noteBody, request.body).note.body), notes, dealId);
  });

  app.post('/service/ui/deals/:id/tasks', edit, async (request, reply) => {
    const { id: dealId } = check(dealParams, request.params);
    return section(request, reply, async (v) => {
      const { task } = check(createTaskBody, request.body);
      await createTask(db, host, v.actor, dealId, { title: task.title, dueDate: task.dueDate, assignee: task.assignee });
    }, tasks, dealId);
  });

  const taskActions = { complete: completeTask, reopen: reopenTask, delete: deleteTask } as const;
  for (const [action, run] of Object.entries(taskActions)) {
    app.post(`/service/ui/tasks/:id/${action}`, edit, async (request, reply) => {
      const v = view(request);
      const { id: taskId } = check(dealParams, request.params);
      const { deal: dealId } = await getTask(db, v.actor, taskId);
      return section(request, reply, () => run(db, v.actor, taskId), tasks, dealId);
    });
  }
}
