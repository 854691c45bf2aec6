import type { BatchResult } from '../domain/deals/batch.service.js';
import type { DealListPage, DealListQuery, OrderBy } from '../domain/deals/deals.list.js';
import type { PipelineJson } from '../domain/pipelines/pipelines.service.js';
import type { HostUser } from '../host/port.js';
import { attr, href, html, type Html } from './html.js';
import { csrfField, may, money, today, type View } from './page.js';
import { userFilter } from './user-picker.js';

/** The deals table: filters, sortable headers, cursor pages, row selection and batch actions. */

export interface TableData {
  query: DealListQuery;
  page: DealListPage;
  pipelines: PipelineJson[];
  users: HostUser[];
  /** The owner filtered by, named even when not among `users`. */
  owner?: { id: number; name: string };
}

const filterParams = (q: DealListQuery) => ({
  search: q.search,
  status: q.status,
  owner: q.owner,
  pipeline: q.pipeline,
  stage: q.stage,
  limit: q.limit === 30 ? undefined : q.limit,
});

function sortHeader(view: View, q: DealListQuery, column: OrderBy, label: string, numeric = false): Html {
  const active = q.orderBy === column;
  const dir = active && q.orderByDir === 'asc' ? 'desc' : 'asc';
  const link = href(`${view.base}/service/deals`, { ...filterParams(q), orderBy: column, orderByDir: dir });
  const arrow = active ? (q.orderByDir === 'asc' ? ' ▲' : ' ▼') : '';
  return html`<th class="${numeric ? 'num' : ''}"${active ? html` aria-sort="${q.orderByDir === 'asc' ? 'ascending' : 'descending'}"` : ''}><a href="${link}">${label}${arrow}</a></th>`;
}

export function batchResults(result: BatchResult, titles: Map<number, string>): Html {
  const verb = { delete: 'deleted', reassign: 'reassigned', move_stage: 'moved' }[result.action];
  return html`<div class="panel results" id="batch-results">
  <strong>${result.succeeded} ${verb}, ${result.failed} failed.</strong> <a href="">Reload the table</a>
  <ul class="list">${result.results.map(
    (r) => html`<li><span>${titles.get(r.id) ?? `Deal ${r.id}`}</span>${
      r.ok ? html`<span class="ok">${verb}</span>` : html`<span class="fail">${r.error?.message ?? 'failed'}</span>`
    }</li>`,
  )}</ul></div>`;
}

export function batchError(message: string): Html {
  return html`<div class="panel results" id="batch-results"><p class="form-error" role="alert">${message}</p></div>`;
}

export function tablePage(view: View, data: TableData): Html {
  const { query: q, page } = data;
  const statuses = [['', 'Any status'], ['open', 'Open'], ['won', 'Won'], ['lost', 'Lost']];
  const stages = data.pipelines.flatMap((p) => p.stages.map((s) => ({ id: s.id, label: `${p.name} · ${s.name}` })));
  const canBatch = may(view, 'service:deals:editown') || may(view, 'service:deals:editother') || may(view, 'service:deals:deleteown') || may(view, 'service:deals:deleteother');
  const next = page.next ? href(`${view.base}/service/deals`, { ...filterParams(q), orderBy: q.orderBy, orderByDir: q.orderByDir, after: page.next }) : null;
  return html`<h1>All deals</h1>
<form class="filters" method="get" action="${view.base}/service/deals">
  <label class="field inline grow"><span>Title</span><input type="search" name="search" value="${q.search ?? ''}" placeholder="Search titles"></label>
  <label class="field inline"><span>Status</span><select name="status" class="autosubmit">
    ${statuses.map(([value, label]) => html`<option value="${value}"${attr('selected', (q.status ?? '') === value)}>${label}</option>`)}</select></label>
  ${userFilter(view, { name: 'owner', label: 'Owner', empty: 'Anyone', users: data.users, current: data.owner, autosubmit: true })}
  <label class="field inline"><span>Pipeline</span><select name="pipeline" class="autosubmit"><option value="">All</option>
    ${data.pipelines.map((p) => html`<option value="${p.id}"${attr('selected', p.id === q.pipeline)}>${p.name}</option>`)}</select></label>
  <label class="field inline"><span>Stage</span><select name="stage" class="autosubmit"><option value="">Any stage</option>
    ${data.pipelines
      .filter((p) => q.pipeline === undefined || p.id === q.pipeline || p.stages.some((s) => s.id === q.stage))
      .map(
        (p) => html`<optgroup label="${p.name}">${p.stages.map((s) => html`<option value="${s.id}"${attr('selected', s.id === q.stage)}>${s.name}</option>`)}</optgroup>`,
      )}</select></label>
  <input type="hidden" name="orderBy" value="${q.orderBy}"><input type="hidden" name="orderByDir" value="${q.orderByDir}">
  <button>Filter</button>
</form>
${canBatch
    ? html`<form id="batch" class="table-tools" hx-post="${view.base}/service/ui/deals/batch" hx-target="#batch-results" hx-swap="outerHTML">
  ${csrfField(view)}
  <label class="field"><span>With the selected deals</span><select name="action">
    <option value="move_stage">Move to stage</option><option value="reassign">Reassign owner</option><option value="delete">Delete</option></select></label>
  <label class="field"><span>Stage</span><select name="stage_id">${stages.map((s) => html`<option value="${s.id}">${s.label}</option>`)}</select></label>
  ${userFilter(view, { name: 'owner', label: 'New owner', empty: 'No owner', users: data.users })}
  <button class="primary">Apply</button>
</form>`
    : ''}
<div id="batch-results"></div>
<p class="muted">${page.totalApproximate ? 'More than ' : ''}${page.total.toLocaleString('en-US')} deal${page.total === 1 ? '' : 's'}</p>
<table class="deals">
  <thead><tr>${canBatch ? html`<th><span class="muted">Select</span></th>` : ''}${sortHeader(view, q, 'title', 'Title')}<th>Stage</th><th>Status</th>
    ${sortHeader(view, q, 'amount', 'Amount', true)}<th>Owner</th>${sortHeader(view, q, 'closeDate', 'Close date')}${sortHeader(view, q, 'updatedAt', 'Updated')}</tr></thead>
  <tbody>${page.deals.map((deal) => {
    const overdue = deal.status === 'open' && deal.closeDate !== null && deal.closeDate < today();
    return html`<tr>${canBatch ? html`<td><input type="checkbox" name="ids[]" value="${deal.id}" form="batch" aria-label="Select ${deal.title}"></td>` : ''}
      <td class="title"><a href="${view.base}/service/${deal.id}/view">${deal.title}</a></td>
      <td>${deal.pipeline.name} · ${deal.stage.name}</td>
      <td><span class="badge ${deal.status}">${deal.status}</span></td>
      <td class="num">${money(deal.amount, deal.currency)}</td>
      <td>${deal.owner?.name ?? '—'}</td>
      <td class="${overdue ? 'overdue' : ''}">${deal.closeDate ?? '—'}</td>
      <td>${deal.updatedAt.slice(0, 10)}</td></tr>`;
  })}</tbody>
</table>
${page.deals.length === 0 ? html`<p class="panel">No deal matches these filters.</p>` : ''}
<div class="pager">
  ${q.after ? html`<a href="${href(`${view.base}/service/deals`, { ...filterParams(q), orderBy: q.orderBy, orderByDir: q.orderByDir })}">← First page</a>` : ''}
  ${next ? html`<a class="button" href="${next}">Next ${q.limit} →</a>` : ''}
</div>`;
}
