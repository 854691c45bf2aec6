import type { DealFullJson } from '../domain/deals/deal-json.js';
import type { stageHistory } from '../domain/deals/history.service.js';
import { sanitizeNote } from '../domain/deals/notes.sanitize.js';
import type { PipelineJson } from '../domain/pipelines/pipelines.service.js';
import type { ContactRow, HostUser } from '../host/port.js';
import { emptyForm, fieldErrors, formMessage, input, select, type FormState } from './forms.js';
import { html, raw, type Html } from './html.js';
import { canEdit } from './board.view.js';
import { csrfField, dateTime, duration, money, today, type View } from './page.js';
import { userPicker } from './user-picker.js';

/** The deal page: details edited in place, stage, buying committee, notes, tasks, stage history. */

export type History = Awaited<ReturnType<typeof stageHistory>>;

export interface DealPageData {
  deal: DealFullJson;
  pipeline: PipelineJson;
  history: History;
  users: HostUser[];
}

const post = (view: View, path: string, target: string) =>
  html`hx-post="${view.base}/service/ui/deals/${path}" hx-target="${target}" hx-swap="outerHTML"`;

export function dealHeader(deal: DealFullJson, oob = false): Html {
  return html`<div class="deal-head" id="deal-head"${oob ? html` hx-swap-oob="true"` : ''}>
  <h1>${deal.title}</h1>
  <span class="badge ${deal.status}">${deal.status === 'open' ? deal.stage.name : deal.status === 'won' ? 'Won' : 'Lost'}</span>
  <strong>${money(deal.amount, deal.currency)}</strong>
  <span class="muted">${deal.pipeline.name} · ${deal.stage.name} (${deal.stage.probability}%)</span>
  ${deal.lostReason ? html`<span class="muted">Lost because: ${deal.lostReason}</span>` : ''}
</div>`;
}

export function detailsSection(view: View, deal: DealFullJson, users: HostUser[], form: FormState = emptyForm(), saved = false): Html {
  const editable = canEdit(view, deal);
  return html`<section class="panel" id="deal-details"><h2>Details</h2>
  <form ${post(view, `${deal.id}/edit`, '#deal-details')} class="stack">
    ${csrfField(view)}${formMessage(form)}
    <fieldset class="fields"${editable ? '' : html` disabled`}>
      <div class="wide">${input(form, 'deal[title]', 'Title', { value: deal.title, required: true })}</div>
      ${input(form, 'deal[amount]', 'Amount', { value: deal.amount.toFixed(2) })}
      ${input(form, 'deal[currency]', 'Currency', { value: deal.currency })}
      ${input(form, 'deal[closeDate]', 'Expected close date', { type: 'date', value: deal.closeDate })}
      ${userPicker(view, form, 'deal[owner]', 'Owner', users, deal.owner, 'No owner')}
    </fieldset>
    ${editable ? html`<div class="row"><button class="primary">Save changes</button>${saved ? html`<span class="ok">Saved</span>` : ''}</div>` : ''}
  </form>
</section>`;
}

export function stageSection(view: View, deal: DealFullJson, pipeline: PipelineJson, form: FormState = emptyForm()): Html {
  if (!canEdit(view, deal)) return html`<section class="panel" id="deal-stage"><h2>Stage</h2><p>${deal.stage.name}</p></section>`;
  const stages = pipeline.stages.map((s) => ({ value: s.id, label: `${s.name}${s.type === 'open' ? '' : ` (${s.type})`}` }));
  return html`<section class="panel" id="deal-stage"><h2>Stage</h2>
  <form ${post(view, `${deal.id}/stage`, '#deal-stage')} class="row">
    ${csrfField(view)}${formMessage(form)}
    ${select(form, 'stage_id', 'Move to', stages, deal.stage.id)}
    ${input(form, 'lost_reason', 'Lost reason (for a lost stage)', { value: deal.lostReason })}
    <button class="primary">Change stage</button>
  </form>
</section>`;
}

const contactName = (c: { first_name: string | null; last_name: string | null; email: string }) =>
  [c.first_name, c.last_name].filter(Boolean).join(' ') || c.email;

export function committeeSection(view: View, deal: DealFullJson, form: FormState = emptyForm()): Html {
  const editable = canEdit(view, deal);
  return html`<section class="panel" id="committee"><h2>Buying committee</h2>
  ${formMessage(form)}
  ${deal.contacts.length === 0 ? html`<p class="muted">No contacts yet.</p>` : ''}
  <ul class="list">${deal.contacts.map(
    (m) => html`<li data-contact-id="${m.contact_id}"><div><strong>${contactName(m.contact)}</strong>
      ${m.is_primary ? html` <span class="primary-mark">★ Primary</span>` : ''}
      <div class="muted">${m.role ?? 'No role'} · ${m.contact.email}${m.contact.company ? ` · ${m.contact.company}` : ''}</div></div>
      ${editable
        ? html`<div class="actions">
        ${m.is_primary ? '' : html`<button class="small" ${post(view, `${deal.id}/contacts/${m.contact_id}/primary`, '#committee')}>Make primary</button>`}
        <button class="small danger" data-confirm="Click again to remove" ${post(view, `${deal.id}/contacts/${m.contact_id}/remove`, '#committee')}>Remove</button>
      </div>`
        : ''}</li>`,
  )}</ul>
  ${editable
    ? html`<div class="stack">
    <label class="field"><span>Add a contact: search by email or name</span>
      <input type="search" name="q" placeholder="ann@acme.example or Ann" hx-get="${view.base}/service/ui/deals/${deal.id}/contacts/search"
        hx-trigger="input changed delay:300ms, search" hx-target="#contact-results" hx-swap="innerHTML" autocomplete="off"></label>
    <div id="contact-results" class="search-results"></div>
  </div>`
    : ''}
</section>`;
}

export function contactResults(view: View, dealId: number, contacts: ContactRow[]): Html {
  if (contacts.length === 0) return html`<p class="muted">No contact matches.</p>`;
  return html`<ul class="list">${contacts.map(
    (c) => html`<li><div><strong>${contactName(c)}</strong><div class="muted">${c.email}${c.company ? ` · ${c.company}` : ''}</div></div>
    <form class="row" ${post(view, `${dealId}/contacts`, '#committee')}>
      ${csrfField(view)}<input type="hidden" name="contact_id" value="${c.id}">
      <input name="role" placeholder="Role, e.g. Champion" aria-label="Role">
      <label class="field inline"><input type="checkbox" name="is_primary" value="true"><span>Primary</span></label>
      <button class="small primary">Add</button>
    </form></li>`,
  )}</ul>`;
}

export function notesSection(view: View, deal: DealFullJson, form: FormState = emptyForm()): Html {
  return html`<section class="panel" id="notes"><h2>Notes</h2>
  ${canEdit(view, deal)
    ? html`<form ${post(view, `${deal.id}/notes`, '#notes')} class="stack">
    ${csrfField(view)}${formMessage(form)}
    <label class="field${form.errors['note[body]'] ? ' invalid' : ''}"><span>New note (simple HTML such as &lt;b&gt; and links is kept)</span>
      <textarea name="note[body]">${form.values['note[body]'] ?? ''}</textarea>${fieldErrors(form, 'note[body]')}</label>
    <div><button class="primary">Add note</button></div>
  </form>`
    : ''}
  ${deal.notes.map(
    // Bodies were sanitized when saved; sanitizing again on display keeps a row written any other way harmless too.
    (note) => html`<article class="note"><div class="note-meta">${note.author?.name ?? 'Unknown'} · ${dateTime(note.createdAt)}</div>
      <div class="note-body">${raw(sanitizeNote(note.body) ?? '')}</div></article>`,
  )}
</section>`;
}

export function tasksSection(view: View, deal: DealFullJson, users: HostUser[], form: FormState = emptyForm()): Html {
  const editable = canEdit(view, deal);
  const taskPost = (id: number, action: string) => html`hx-post="${view.base}/service/ui/tasks/${id}/${action}" hx-target="#tasks" hx-swap="outerHTML"`;
  return html`<section class="panel" id="tasks"><h2>Tasks</h2>
  ${formMessage(form)}
  <ul class="list">${deal.tasks.map((task) => {
    const overdue = !task.isCompleted && task.dueDate !== null && task.dueDate < today();
    return html`<li data-task-id="${task.id}"><div><span class="${task.isCompleted ? 'done' : ''}">${task.title}</span>
      <div class="muted">${task.dueDate ? html`<span class="${overdue ? 'overdue' : ''}">Due ${task.dueDate}</span>` : 'No due date'} · ${task.assignee?.name ?? 'Unassigned'}</div></div>
      ${editable
        ? html`<div class="actions">${task.isCompleted
            ? html`<button class="small" ${taskPost(task.id, 'reopen')}>Reopen</button>`
            : html`<button class="small primary" ${taskPost(task.id, 'complete')}>Complete</button>`}
        <button class="small danger" data-confirm="Click again to delete" ${taskPost(task.id, 'delete')}>Delete</button></div>`
        : ''}</li>`;
  })}</ul>
  ${deal.tasks.length === 0 ? html`<p class="muted">No tasks.</p>` : ''}
  ${editable
    ? html`<form ${post(view, `${deal.id}/tasks`, '#tasks')} class="row">
    ${csrfField(view)}
    ${input(form, 'task[title]', 'New task', { required: true })}
    ${input(form, 'task[dueDate]', 'Due', { type: 'date' })}
    ${userPicker(view, form, 'task[assignee]', 'Assignee', users, { id: view.actor.id, name: view.actor.name }, 'Unassigned')}
    <button class="primary">Add task</button>
  </form>`
    : ''}
</section>`;
}

export function historySection(history: History, oob = false): Html {
  return html`<section class="panel" id="history"${oob ? html` hx-swap-oob="true"` : ''}><h2>Stage history</h2>
  <ol class="timeline">${[...history].reverse().map((entry, index, list) => {
    const next = list[index - 1];
    const stayed = next ? next.secondsInPrevious : Math.round((Date.now() - new Date(entry.changedAt).getTime()) / 1000);
    return html`<li><strong>${entry.to?.name ?? 'Deleted stage'}</strong>
      <div class="muted">${entry.from ? html`from ${entry.from.name} · ` : 'created · '}${entry.changed_by.name} · ${dateTime(entry.changedAt)}</div>
      <div class="muted">${next ? 'Spent' : 'In it for'} ${duration(stayed ?? 0)} here</div></li>`;
  })}</ol>
</section>`;
}

export function dealPage(view: View, data: DealPageData): Html {
  const { deal } = data;
  return html`<p><a href="${view.base}/service/board?pipeline=${deal.pipeline.id}">← ${deal.pipeline.name} board</a></p>
${dealHeader(deal)}
<div class="deal-grid">
  <div>${detailsSection(view, deal, data.users)}${stageSection(view, deal, data.pipeline)}${notesSection(view, deal)}</div>
  <div>${committeeSection(view, deal)}${tasksSection(view, deal, data.users)}${historySection(data.history)}</div>
</div>`;
}
