import type { PipelineJson, RoleChoice, StageJson } from '../domain/pipelines/pipelines.service.js';
import { emptyForm, fieldErrors, formMessage, input, select, type FormState } from './forms.js';
import { html, type Html } from './html.js';
import { colorSwatch, csrfField, type View } from './page.js';

/** Pipeline settings: the list with a create form, and one pipeline's page with its stages. */

export const STAGE_TYPES = [
  { value: 'open', label: 'Open' },
  { value: 'won', label: 'Won' },
  { value: 'lost', label: 'Lost' },
];
/** Colours offered by name (the API takes any #rrggbb; another one shows as "Custom"). */
export const STAGE_COLORS = [
  { value: '#667085', label: 'Grey' },
  { value: '#1d4ed8', label: 'Blue' },
  { value: '#0e9384', label: 'Teal' },
  { value: '#079455', label: 'Green' },
  { value: '#dc6803', label: 'Amber' },
  { value: '#d92d20', label: 'Red' },
  { value: '#7a5af8', label: 'Purple' },
  { value: '#dd2590', label: 'Pink' },
];
const colorChoices = (current: string | null | undefined) =>
  current && !STAGE_COLORS.some((c) => c.value === current) ? [...STAGE_COLORS, { value: current, label: `Custom (${current})` }] : STAGE_COLORS;
const colorSelect = (form: FormState, name: string, current: string | null | undefined) =>
  select(form, name, 'Colour', colorChoices(form.values[name] ?? current), current, { empty: 'None' });

/** Rows of the create form; empty rows are left out. */
export const NEW_STAGE_ROWS = 6;
const SUGGESTED = [
  { name: 'Qualification', type: 'open', probability: '10', color: '#1d4ed8' },
  { name: 'Proposal', type: 'open', probability: '50', color: '#dc6803' },
  { name: 'Won', type: 'won', probability: '100', color: '#079455' },
  { name: 'Lost', type: 'lost', probability: '0', color: '#d92d20' },
];

const path = (view: View, rest = '') => `${view.base}/service/settings/pipelines${rest}`;
const typeLabel = (type: string) => STAGE_TYPES.find((t) => t.value === type)?.label ?? type;

const DELETE_RULE = html`<p class="muted">A pipeline can be deleted only while it holds no deals (open, won or lost) and no inbound source creates deals in it;
  move or delete those deals first. The default pipeline, where new deals go when no pipeline is named, cannot be deleted: make another one the default first.</p>`;

export function pipelineListPage(view: View, pipelines: PipelineJson[], form: FormState = emptyForm()): Html {
  const typed = Object.keys(form.values).some((name) => name.startsWith('stages['));
  const rows = Array.from({ length: NEW_STAGE_ROWS }, (_, i) => {
    const suggestion = typed ? undefined : SUGGESTED[i];
    const name = `stages[${i}]`;
    return html`<tr>
      <td>${input(form, `${name}[name]`, `Stage ${i + 1} name`, { value: suggestion?.name })}</td>
      <td>${select(form, `${name}[type]`, 'Type', STAGE_TYPES, suggestion?.type ?? 'open')}</td>
      <td>${input(form, `${name}[probability]`, 'Probability %', { type: 'number', value: suggestion?.probability, placeholder: 'auto' })}</td>
      <td>${colorSelect(form, `${name}[color]`, suggestion?.color)}</td>
    </tr>`;
  });
  return html`<h1>Pipelines and stages</h1>
<section class="panel">
  <h2>Pipelines</h2>
  ${pipelines.length === 0
    ? html`<p class="muted">No pipelines yet.</p>`
    : html`<table class="deals settings-table"><thead><tr><th>Name</th><th>Stages</th><th></th></tr></thead><tbody>
      ${pipelines.map(
        (p) => html`<tr><td class="title"><a href="${path(view, `/${p.id}`)}">${p.name}</a>${p.isDefault ? html` <span class="badge">Default</span>` : ''}</td>
          <td class="muted">${p.stages.map((s) => s.name).join(' → ')}</td>
          <td><a class="button" href="${path(view, `/${p.id}`)}">Edit</a></td></tr>`,
      )}</tbody></table>`}
</section>
<section class="panel" id="new-pipeline">
  <h2>New pipeline</h2>
  <p class="muted">Name the pipeline and its first stages, in the order deals move through them. Leave a row empty to skip it; you can add, edit and reorder stages later.
    Probability is the chance a deal in that stage is won, used for the weighted forecast; empty means 100 for won stages and 0 for the others.</p>
  <form method="post" action="${path(view, '/new')}" class="stack">
    ${csrfField(view)}${formMessage(form)}
    <div class="row">${input(form, 'pipeline[name]', 'Pipeline name', { required: true })}</div>
    ${fieldErrors(form, 'stages')}
    <table class="stage-rows"><tbody>${rows}</tbody></table>
    <div class="row"><button class="primary">Create pipeline</button></div>
  </form>
</section>`;
}

export interface PipelineForms {
  rename?: FormState;
  /** A refused change of who sees the pipeline (a role deleted meanwhile). */
  roles?: FormState;
  remove?: FormState;
  addStage?: FormState;
  /** A refused stage edit or delete: the form of that stage only. */
  stage?: { id: number; form: FormState };
}

function stageRow(view: View, pipeline: PipelineJson, stage: StageJson, forms: PipelineForms): Html {
  const form = forms.stage?.id === stage.id ? forms.stage.form : emptyForm();
  const others = pipeline.stages.filter((s) => s.id !== stage.id).map((s) => ({ value: s.id, label: s.name }));
  return html`<li class="stage-item panel" data-stage-id="${stage.id}" id="stage-${stage.id}">
  <span class="handle" title="Drag to reorder" aria-hidden="true">⠿</span>
  <div class="stage-main">
    <div class="stage-title">${colorSwatch(stage.color, STAGE_COLORS.find((c) => c.value === stage.color)?.label ?? 'Colour')}<strong>${stage.name}</strong> <span class="badge ${stage.type}">${typeLabel(stage.type)}</span> <span class="muted">${stage.probability}%</span></div>
    ${formMessage(form)}
    <form method="post" action="${view.base}/service/settings/stages/${stage.id}/edit" class="stage-form">
      ${csrfField(view)}
      ${input(form, 'stage[name]', 'Name', { value: stage.name, required: true })}
      ${select(form, 'stage[type]', 'Type', STAGE_TYPES, stage.type)}
      ${input(form, 'stage[probability]', 'Probability %', { type: 'number', value: stage.probability })}
      ${colorSelect(form, 'stage[color]', stage.color)}
      <button>Save</button>
    </form>
    <details class="stage-delete"${form.errors.moveTo ? html` open` : ''}><summary>Delete this stage…</summary>
      <form method="post" action="${view.base}/service/settings/stages/${stage.id}/delete" class="row">
        ${csrfField(view)}
        ${select(form, 'moveTo', 'Move its deals to', others, undefined, { empty: 'Nowhere (only if it holds no deals)' })}
        <button class="danger" data-confirm="Click again to delete">Delete stage</button>
      </form>
      <p class="muted">A stage holding deals is deleted only by moving them to another stage of this pipeline; each move is recorded in the deal’s history like a move on the board.</p>
    </details>
  </div>
</li>`;
}

/** Who sees the pipeline: every role, or the roles checked (the API's `pipeline[roles]`; administrators see every pipeline). */
function visibilityPanel(view: View, pipeline: PipelineJson, roles: RoleChoice[], form: FormState): Html {
  const errors = Object.keys(form.errors).filter((name) => name.startsWith('pipeline[roles]'));
  return html`<section class="panel" id="visibility">
  <h2>Who sees it</h2>
  <p class="muted">${pipeline.roles.length === 0
    ? 'Everyone who may see deals sees this pipeline and its deals.'
    : html`Only the roles checked below (and administrators) see this pipeline and its deals.`}</p>
  <form method="post" action="${path(view, `/${pipeline.id}/roles`)}" class="stack">
    ${csrfField(view)}${formMessage(form)}
    <input type="hidden" name="pipeline[roles][]" value="">
    <fieldset class="field${errors.length ? ' invalid' : ''}"><span>Limit to these roles</span>
      ${roles.map(
        (role) => html`<label class="check"><input type="checkbox" name="pipeline[roles][]" value="${role.id}"${pipeline.roles.includes(role.id) ? html` checked` : ''}> ${role.name}${
          role.isAdmin ? html` <span class="muted">(sees every pipeline anyway)</span>` : ''
        }</label>`,
      )}
      ${errors.map((name) => fieldErrors(form, name))}
    </fieldset>
    <p class="muted hint">None checked: every role sees it. Administrators always see every pipeline.</p>
    <div><button class="primary">Save who sees it</button></div>
  </form>
</section>`;
}

export function pipelinePage(view: View, pipeline: PipelineJson, roles: RoleChoice[], forms: PipelineForms = {}): Html {
  const rename = forms.rename ?? emptyForm();
  const remove = forms.remove ?? emptyForm();
  const add = forms.addStage ?? emptyForm();
  return html`<p><a href="${path(view)}">← All pipelines</a></p>
<h1>${pipeline.name}${pipeline.isDefault ? html` <span class="badge">Default</span>` : ''}</h1>
<div class="settings-grid">
<section class="panel" id="stages">
  <h2>Stages</h2>
  <p class="muted">Deals move through the stages from top to bottom. Drag a stage by its handle (⠿) to change the order; it is saved at once.</p>
  <ol class="stage-list" data-reorder-url="${path(view, `/${pipeline.id}/stages/reorder`)}">
    ${pipeline.stages.map((stage) => stageRow(view, pipeline, stage, forms))}
  </ol>
  <h3>Add a stage</h3>
  <form method="post" action="${path(view, `/${pipeline.id}/stages/new`)}" class="row" id="add-stage">
    ${csrfField(view)}${formMessage(add)}
    ${input(add, 'stage[name]', 'Name', { required: true })}
    ${select(add, 'stage[type]', 'Type', STAGE_TYPES, 'open')}
    ${input(add, 'stage[probability]', 'Probability %', { type: 'number', placeholder: 'auto' })}
    ${colorSelect(add, 'stage[color]', null)}
    ${input(add, 'stage[position]', 'Position', { type: 'number', placeholder: 'last' })}
    <button class="primary">Add stage</button>
  </form>
</section>
<div class="stack">
<section class="panel" id="rename">
  <h2>Name</h2>
  <form method="post" action="${path(view, `/${pipeline.id}/edit`)}" class="row">
    ${csrfField(view)}${formMessage(rename)}
    ${input(rename, 'pipeline[name]', 'Pipeline name', { value: pipeline.name, required: true })}
    <button class="primary">Rename</button>
  </form>
  ${pipeline.isDefault
    ? html`<p class="muted">This is the default pipeline: new deals go here when no pipeline is named.</p>`
    : html`<form method="post" action="${path(view, `/${pipeline.id}/default`)}" class="row">${csrfField(view)}
        <button>Make this the default pipeline</button></form>`}
</section>
${visibilityPanel(view, pipeline, roles, forms.roles ?? emptyForm())}
<section class="panel" id="delete">
  <h2>Delete pipeline</h2>
  ${DELETE_RULE}
  ${formMessage(remove)}
  <form method="post" action="${path(view, `/${pipeline.id}/delete`)}">
    ${csrfField(view)}<button class="danger" data-confirm="Click again to delete ${pipeline.name}">Delete pipeline</button>
  </form>
</section>
</div>
</div>`;
}
