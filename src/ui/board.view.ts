import type { DealSummaryJson } from '../domain/deals/deal-json.js';
import type { CurrencyFigures, PipelineSummary, SummaryStatus } from '../domain/deals/summary.service.js';
import type { PipelineJson, StageJson } from '../domain/pipelines/pipelines.service.js';
import type { HostUser } from '../host/port.js';
import { canOnRecord } from '../host/permissions.js';
import { fieldErrors, formMessage, type FormState } from './forms.js';
import { attr, href, html, type Html } from './html.js';
import { colorSwatch, csrfField, daysSince, may, money, today, type View } from './page.js';
import { userFilter } from './user-picker.js';

/** The board's markup: filters, one column per stage, cards, won/lost drop zones, the quick-add form. */

export const STALE_DAYS = 14;
export const CARDS_PER_PAGE = 50;

export interface BoardFilters {
  pipeline: number;
  status: SummaryStatus;
  owner?: number;
  search?: string;
}

export const filterQuery = (f: BoardFilters) => ({ pipeline: f.pipeline, status: f.status, owner: f.owner, search: f.search });

export const canEdit = (view: View, deal: DealSummaryJson) =>
  canOnRecord(view.actor, { ownerId: deal.owner?.id ?? null, createdById: deal.createdBy?.id ?? null }, 'service:deals:editown', 'service:deals:editother');

export function card(view: View, deal: DealSummaryJson): Html {
  const editable = canEdit(view, deal);
  const overdue = deal.status === 'open' && deal.closeDate !== null && deal.closeDate < today();
  const idle = daysSince(deal.updatedAt);
  const inStage = daysSince(deal.stageChangedAt);
  return html`<article class="card${editable ? '' : ' locked'}" id="deal-${deal.id}" data-deal-id="${deal.id}">
  <a class="card-title" href="${view.base}/service/${deal.id}/view">${deal.title}</a>
  <div class="card-amount">${money(deal.amount, deal.currency)}</div>
  <div class="card-meta">
    <span title="Owner">${deal.owner?.name ?? 'No owner'}</span>
    ${deal.closeDate ? html`<span class="${overdue ? 'overdue' : ''}" title="Expected close date">${overdue ? 'Overdue · ' : ''}${deal.closeDate}</span>` : ''}
  </div>
  <div class="card-flags">
    <span class="muted">${inStage} day${inStage === 1 ? '' : 's'} in stage</span>
    ${deal.status === 'open' && idle >= STALE_DAYS ? html`<span class="flag stale">No activity for ${idle} days</span>` : ''}
    ${editable ? '' : html`<span class="flag" title="You may view this deal but not move it">View only</span>`}
  </div>
</article>`;
}

/** The sentinel that loads the next page of a column when it scrolls into view (or is clicked). */
export function moreCards(view: View, filters: BoardFilters, stageId: number, next: string | null): Html {
  if (!next) return html``;
  const url = href(`${view.base}/service/ui/board/cards`, { ...filterQuery(filters), stage: stageId, after: next });
  return html`<button type="button" class="more" hx-get="${url}" hx-trigger="intersect once, click" hx-swap="outerHTML">Load more</button>`;
}

function figures(list: CurrencyFigures[]): Html {
  if (list.length === 0) return html`<div class="figures muted">No deals</div>`;
  return html`${list.map(
    (f) => html`<div class="figures"><span>${f.count} deal${f.count === 1 ? '' : 's'}</span><span class="sum">${money(f.amount, f.currency)}</span><span class="weighted" title="Probability-weighted">≈ ${money(f.weighted, f.currency)}</span></div>`,
  )}`;
}

export function columnHeader(stage: StageJson, summary: PipelineSummary, oob = false): Html {
  const entry = summary.stages.find((s) => s.stage.id === stage.id);
  return html`<header class="column-head" id="head-${stage.id}"${oob ? html` hx-swap-oob="true"` : ''}>
  <h2><span>${colorSwatch(stage.color)}${stage.name}</span> <span class="prob">${stage.probability}%</span></h2>
  ${figures(entry?.currencies ?? [])}
</header>`;
}

export function pipelineTotals(summary: PipelineSummary, oob = false): Html {
  return html`<div id="board-totals" class="board-totals"${oob ? html` hx-swap-oob="true"` : ''}>
  <strong>Pipeline</strong>${figures(summary.totals)}
</div>`;
}

export function quickAdd(view: View, filters: BoardFilters, stage: StageJson, form: FormState, open = false): Html {
  if (!may(view, 'service:deals:create')) return html``;
  return html`<details class="quick-add" id="add-${stage.id}"${attr('open', open)}>
  <summary>+ New deal</summary>
  <form hx-post="${view.base}/service/ui/board/deals" hx-target="#add-${stage.id}" hx-swap="outerHTML" class="stack">
    ${csrfField(view)}
    <input type="hidden" name="deal[stage]" value="${stage.id}">
    <input type="hidden" name="deal[pipeline]" value="${filters.pipeline}">
    ${hiddenFilters(filters)}
    ${formMessage(form)}
    <label class="field${form.errors['deal[title]'] ? ' invalid' : ''}"><span>Title</span>
      <input name="deal[title]" value="${form.values['deal[title]'] ?? ''}" required>${fieldErrors(form, 'deal[title]')}</label>
    <label class="field${form.errors['deal[amount]'] ? ' invalid' : ''}"><span>Amount</span>
      <input name="deal[amount]" inputmode="decimal" value="${form.values['deal[amount]'] ?? ''}" placeholder="0.00">${fieldErrors(form, 'deal[amount]')}</label>
    <button class="primary">Add deal</button>
  </form>
</details>`;
}

const hiddenFilters = (f: BoardFilters) =>
  html`<input type="hidden" name="board[status]" value="${f.status}">${f.owner ? html`<input type="hidden" name="board[owner]" value="${f.owner}">` : ''}${
    f.search ? html`<input type="hidden" name="board[search]" value="${f.search}">` : ''
  }`;

export interface BoardData {
  pipelines: PipelineJson[];
  pipeline: PipelineJson;
  filters: BoardFilters;
  summary: PipelineSummary;
  columns: { stage: StageJson; deals: DealSummaryJson[]; next: string | null }[];
  dropZones: StageJson[];
  owners: HostUser[];
  /** The owner filtered by, named even when not among `owners`. */
  owner?: { id: number; name: string };
}

export function boardPage(view: View, data: BoardData): Html {
  const { filters } = data;
  const statuses: [SummaryStatus, string][] = [['open', 'Open'], ['won', 'Won'], ['lost', 'Lost'], ['all', 'All']];
  return html`<section class="board-page" data-move-url="${view.base}/service/ui/board/move" data-filters="${new URLSearchParams(
    Object.entries(filterQuery(filters)).filter(([, v]) => v !== undefined).map(([k, v]) => [k, String(v)]),
  ).toString()}">
<form class="filters" method="get" action="${view.base}/service/board">
  <label class="field inline"><span>Pipeline</span><select name="pipeline" class="autosubmit">
    ${data.pipelines.map((p) => html`<option value="${p.id}"${attr('selected', p.id === data.pipeline.id)}>${p.name}</option>`)}
  </select></label>
  ${userFilter(view, { name: 'owner', label: 'Owner', empty: 'Anyone', users: data.owners, current: data.owner, autosubmit: true })}
  <label class="field inline"><span>Status</span><select name="status" class="autosubmit">
    ${statuses.map(([value, label]) => html`<option value="${value}"${attr('selected', value === filters.status)}>${label}</option>`)}
  </select></label>
  <label class="field inline grow"><span>Title</span><input type="search" name="search" value="${filters.search ?? ''}" placeholder="Search titles"></label>
  <button>Filter</button>
  ${pipelineTotals(data.summary)}
</form>
<div class="board">
  ${data.columns.map(
    ({ stage, deals, next }) => html`<section class="column" data-stage-id="${stage.id}">
    ${columnHeader(stage, data.summary)}
    ${quickAdd(view, filters, stage, { values: {}, errors: {} })}
    <div class="cards" id="cards-${stage.id}" data-stage-id="${stage.id}">
      ${deals.map((deal) => card(view, deal))}${moreCards(view, filters, stage.id, next)}
    </div>
  </section>`,
  )}
</div>
${data.dropZones.length
    ? html`<div class="drop-zones">${data.dropZones.map(
        (stage) => html`<div class="drop-zone ${stage.type}"><span>Drop here: ${stage.name}</span>
          <div class="cards" id="cards-${stage.id}" data-stage-id="${stage.id}" data-stage-type="${stage.type}"></div>
          ${stage.type === 'lost'
            ? html`<form class="lost-reason row" hidden>
            <label class="field grow"><span>Why was it lost? (optional)</span><input name="lost_reason" maxlength="255"></label>
            <button class="primary">Mark lost</button><button type="button" class="cancel">Cancel</button></form>`
            : ''}</div>`,
      )}</div>`
    : ''}
</section>`;
}
