import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { addStageBody, createPipelineBody, deleteStageQuery, editPipelineBody, editStageBody, reorderBody } from '../domain/pipelines/pipelines.schemas.js';
import { createPipeline, editPipeline, getPipeline, listPipelines, pipelineRoleChoices, removePipeline } from '../domain/pipelines/pipelines.service.js';
import { addStage, editStage, getStage, removeStage, reorderStages } from '../domain/pipelines/stages.service.js';
import { id } from '../http/schemas.js';
import { check, submitForm } from './forms.js';
import type { UiOptions } from './index.js';
import { sendHtml, viewOf, type View } from './page.js';
import { NEW_STAGE_ROWS, pipelineListPage, pipelinePage, type PipelineForms } from './settings-pipelines.view.js';
import { doneNotice, settingsPage } from './settings.routes.js';

/**
 * Pipeline and stage settings. Every form posts the API's body format to the
 * API's own service (the routes of /service/pipelines and /service/stages), and
 * the same permission guards it: service:pipelines:manage.
 */

const params = z.object({ id });
const PATH = '/service/settings/pipelines';
const DONE: Record<string, string> = {
  created: 'Pipeline created.',
  renamed: 'Pipeline renamed.',
  roles: 'Saved who sees this pipeline.',
  default: 'This is now the default pipeline.',
  deleted: 'Pipeline deleted.',
  'stage-added': 'Stage added.',
  'stage-saved': 'Stage saved.',
  'stage-deleted': 'Stage deleted.',
};

/** An empty optional input (probability, position) means "not given": the API's default applies. (An empty colour is "None", which the schema reads as null.) */
function withoutBlanks(row: unknown): unknown {
  if (!row || typeof row !== 'object') return row;
  const out = { ...(row as Record<string, unknown>) };
  for (const key of ['probability', 'position']) if (typeof out[key] === 'string' && (out[key] as string).trim() === '') delete out[key];
  return out;
}
const stageForm = (body: unknown) => ({ ...((body ?? {}) as Record<string, unknown>), stage: withoutBlanks((body as Record<string, unknown> | undefined)?.stage) });

/** The create form's rows that were left empty are not stages. */
function withoutEmptyRows(body: unknown): unknown {
  const value = (body ?? {}) as Record<string, unknown>;
  const rows = Array.isArray(value.stages) ? value.stages : value.stages && typeof value.stages === 'object' ? Object.values(value.stages) : [];
  const filled = rows.slice(0, NEW_STAGE_ROWS).filter((row) => {
    const r = (row ?? {}) as Record<string, unknown>;
    return [r.name, r.probability].some((v) => typeof v === 'string' && v.trim() !== '');
  });
  return { ...value, stages: filled.map(withoutBlanks) };
}

/** A move-to choice of "nowhere" is no moveTo at all. */
function moveToOf(body: unknown): unknown {
  const value = (body ?? {}) as Record<string, unknown>;
  return value.moveTo === '' ? { ...value, moveTo: undefined } : value;
}

export async function settingsPipelineRoutes(app: FastifyInstance, deps: UiOptions): Promise<void> {
  const { db } = deps;
  const base = app.prefix;
  const manage = { config: { permission: 'service:pipelines:manage' as const, page: 'page' as const }, schema: { hide: true } };
  const view = (request: FastifyRequest): View => viewOf(request, base);
  const redirect = (reply: FastifyReply, to: string, done: string, anchor = '') => reply.redirect(`${base}${to}?done=${done}${anchor}`, 303);

  async function showList(request: FastifyRequest, reply: FastifyReply, form?: Parameters<typeof pipelineListPage>[2], status = 200) {
    const v = view(request);
    const pipelines = await listPipelines(db, v.actor);
    return sendHtml(reply, settingsPage(v, 'Pipelines', PATH, pipelineListPage(v, pipelines, form), form ? undefined : doneNotice(request.query, DONE)), status);
  }

  async function showPipeline(request: FastifyRequest, reply: FastifyReply, pipelineId: number, forms?: PipelineForms, status = 200) {
    const v = view(request);
    const [pipeline, roles] = await Promise.all([getPipeline(db, v.actor, pipelineId), pipelineRoleChoices(db)]);
    const notice = forms ? undefined : doneNotice(request.query, DONE);
    return sendHtml(reply, settingsPage(v, pipeline.name, PATH, pipelinePage(v, pipeline, roles, forms), notice), status);
  }

  app.get(PATH, manage, async (request, reply) => showList(request, reply));

  app.post(`${PATH}/new`, manage, async (request, reply) => {
    const body = withoutEmptyRows(request.body);
    const done = await submitForm(createPipelineBody, body, (data) => createPipeline(db, data));
    if (!done.ok) return showList(request, reply, done.form, done.status);
    return redirect(reply, `${PATH}/${done.result.id}`, 'created');
  });

  app.get(`${PATH}/:id`, manage, async (request, reply) => showPipeline(request, reply, check(params, request.params).id));

  app.post(`${PATH}/:id/edit`, manage, async (request, reply) => {
    const { id: pipelineId } = check(params, request.params);
    const done = await submitForm(editPipelineBody, request.body, (data) => editPipeline(db, view(request).actor, pipelineId, { name: data.pipeline.name }));
    if (!done.ok) return showPipeline(request, reply, pipelineId, { rename: done.form }, done.status);
    return redirect(reply, `${PATH}/${pipelineId}`, 'renamed');
  });

  // The checked roles (the API's pipeline[roles]); a hidden empty entry makes "none checked" arrive as an empty list: every role.
  app.post(`${PATH}/:id/roles`, manage, async (request, reply) => {
    const { id: pipelineId } = check(params, request.params);
    const done = await submitForm(editPipelineBody, request.body, (data) => editPipeline(db, view(request).actor, pipelineId, { roles: data.pipeline.roles ?? [] }));
    if (!done.ok) return showPipeline(request, reply, pipelineId, { roles: done.form }, done.status);
    return redirect(reply, `${PATH}/${pipelineId}`, 'roles', '#visibility');
  });

  app.post(`${PATH}/:id/default`, manage, async (request, reply) => {
    const { id: pipelineId } = check(params, request.params);
    const done = await submitForm(z.object({}), request.body, () => editPipeline(db, view(request).actor, pipelineId, { isDefault: true }));
    if (!done.ok) return showPipeline(request, reply, pipelineId, { rename: done.form }, done.status);
    return redirect(reply, `${PATH}/${pipelineId}`, 'default');
  });

  app.post(`${PATH}/:id/delete`, manage, async (request, reply) => {
    const { id: pipelineId } = check(params, request.params);
    const done = await submitForm(z.object({}), request.body, () => removePipeline(db, view(request).actor, pipelineId));
    if (!done.ok) return showPipeline(request, reply, pipelineId, { remove: done.form }, done.status);
    return redirect(reply, PATH, 'deleted');
  });

  app.post(`${PATH}/:id/stages/new`, manage, async (request, reply) => {
    const { id: pipelineId } = check(params, request.params);
    const done = await submitForm(addStageBody, stageForm(request.body), (data) => addStage(db, view(request).actor, pipelineId, data.stage));
    if (!done.ok) return showPipeline(request, reply, pipelineId, { addStage: done.form }, done.status);
    return redirect(reply, `${PATH}/${pipelineId}`, 'stage-added', '#stages');
  });

  app.post('/service/settings/stages/:id/edit', manage, async (request, reply) => {
    const { id: stageId } = check(params, request.params);
    const stage = await getStage(db, view(request).actor, stageId);
    const done = await submitForm(editStageBody, stageForm(request.body), (data) => editStage(db, view(request).actor, stageId, data.stage));
    if (!done.ok) return showPipeline(request, reply, stage.pipeline.id, { stage: { id: stageId, form: done.form } }, done.status);
    return redirect(reply, `${PATH}/${stage.pipeline.id}`, 'stage-saved', `#stage-${stageId}`);
  });

  app.post('/service/settings/stages/:id/delete', manage, async (request, reply) => {
    const { id: stageId } = check(params, request.params);
    const stage = await getStage(db, view(request).actor, stageId);
    const done = await submitForm(deleteStageQuery, moveToOf(request.body), (data) => removeStage(db, view(request).actor, stageId, data.moveTo));
    if (!done.ok) {
      // A refusal for deals still in the stage belongs next to the move-to choice.
      const form = done.status === 409 && done.form.message ? { ...done.form, errors: { moveTo: [done.form.message] }, message: undefined } : done.form;
      return showPipeline(request, reply, stage.pipeline.id, { stage: { id: stageId, form } }, done.status);
    }
    return redirect(reply, `${PATH}/${stage.pipeline.id}`, 'stage-deleted', '#stages');
  });

  // Called by settings.js after a drag: the order of every stage, first to last. Errors come back as words (htmx-style) for the toast.
  app.post(`${PATH}/:id/stages/reorder`, manage, async (request, reply) => {
    const { id: pipelineId } = check(params, request.params);
    const { order } = check(reorderBody, request.body);
    await reorderStages(db, view(request).actor, pipelineId, order);
    return reply.type('text/plain; charset=utf-8').header('Cache-Control', 'no-store').send('Stage order saved');
  });
}
