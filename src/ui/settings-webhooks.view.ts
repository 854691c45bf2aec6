import { EVENT_NAMES } from '../events/events.js';
import { TEST_EVENT } from '../events/test-event.js';
import type { WebhookJson } from '../domain/webhooks/webhooks.service.js';
import { DELIVERY_STATUSES } from '../domain/webhooks/webhooks.schemas.js';
import { emptyForm, fieldErrors, formMessage, input, type FormState } from './forms.js';
import { attr, href, html, type Html } from './html.js';
import { DEFAULT_RETRY_POLICY } from '../events/retry-policy.js';
import { csrfField, dateTime, duration, type View } from './page.js';
import { copyBlock, settingsHead } from './settings-inbound.view.js';

/**
 * Outbound webhook subscriptions as pages: the list with a create form, and
 * one subscription with its state, a test event, the delivery log with "send
 * again" per delivery, and rotation of its signing secret.
 */

export const WEBHOOKS_PATH = '/service/settings/webhooks';

type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export interface DeliveryJson {
  id: number;
  eventId: string;
  event: string;
  status: DeliveryStatus;
  attemptCount: number;
  nextAttemptAt: string | null;
  lastStatusCode: number | null;
  lastError: string | null;
  deliveredAt: string | null;
  createdAt: string;
  attempts: { id: number; attemptedAt: string; statusCode: number | null; durationMs: number; error: string | null }[];
}

export interface DeliveryPage {
  total: number;
  page: number;
  pages: number;
  deliveries: DeliveryJson[];
}

const EVENT_WORDS: Record<string, string> = {
  'service.deal.created': 'Deal created',
  'service.deal.updated': 'Deal updated',
  'deal.stage_changed': 'Deal moved to another stage',
  'service.deal.won': 'Deal won',
  'service.deal.lost': 'Deal lost',
  'service.deal.contact_added': 'Contact added to a deal',
  'service.deal.note_added': 'Note added to a deal',
  'service.deal.task_completed': 'Task completed',
  'service.deal.deleted': 'Deal deleted',
  [TEST_EVENT]: 'Test event',
};

const webhookPath = (v: View, id: number) => `${v.base}${WEBHOOKS_PATH}/${id}`;

function stateBadge(w: WebhookJson): Html {
  if (!w.enabled) return html`<span class="badge lost">Disabled</span>`;
  if (w.failingSince) return html`<span class="badge lost">Failing since ${dateTime(w.failingSince)}</span>`;
  return html`<span class="badge won">Active</span>`;
}

/** The events checkboxes; `chosen` is what was typed (after an error) or stored. */
function eventChoices(form: FormState, chosen: readonly string[]): Html {
  const invalid = form.errors.events ? ' invalid' : '';
  return html`<fieldset class="field${invalid}"><span>Events to send</span>
    <div class="events-choice">${EVENT_NAMES.map(
      (name) => html`<label><input type="checkbox" name="events[]" value="${name}"${attr('checked', chosen.includes(name))}>
<span>${EVENT_WORDS[name] ?? name}</span><code class="muted">${name}</code></label>`,
    )}</div>${fieldErrors(form, 'events')}</fieldset>`;
}

export function webhookList(v: View, webhooks: WebhookJson[], form: FormState = emptyForm(), chosen: readonly string[] = EVENT_NAMES): Html {
  return html`<div id="settings" class="settings-section">
  ${settingsHead(v, 'Outbound webhooks')}
  <p class="muted lead">A subscription sends deal events as signed JSON POSTs (Standard Webhooks: <code>webhook-id</code>, <code>webhook-timestamp</code>, <code>webhook-signature</code>) to a URL of yours, retrying failures for up to ${duration(DEFAULT_RETRY_POLICY.retryWindowMs / 1000)}.</p>
  ${webhooks.length === 0
    ? html`<p class="panel">No subscriptions yet. Create one below.</p>`
    : html`<table class="deals settings-table">
    <thead><tr><th>Name</th><th>URL</th><th>Events</th><th>State</th></tr></thead>
    <tbody>${webhooks.map(
      (w) => html`<tr><td class="title"><a href="${webhookPath(v, w.id)}">${w.name}</a></td><td class="url"><code>${w.url}</code></td>
        <td>${w.events.length === EVENT_NAMES.length ? 'All events' : w.events.map((e) => EVENT_WORDS[e] ?? e).join(', ')}</td><td>${stateBadge(w)}</td></tr>`,
    )}</tbody></table>`}
  <section class="panel" id="new-webhook">
    <h2>New subscription</h2>
    <form method="post" action="${v.base}${WEBHOOKS_PATH}/new" hx-post="${v.base}${WEBHOOKS_PATH}/new" hx-target="#settings" hx-swap="outerHTML" class="stack" novalidate>
      ${csrfField(v)}${formMessage(form)}
      <div class="row">
        ${input(form, 'name', 'Name', { required: true, placeholder: 'CRM sync' })}
        <div class="field grow">${input(form, 'url', 'URL the events are posted to', { type: 'url', required: true, placeholder: 'https://crm.example.com/hooks/deals' })}</div>
      </div>
      ${eventChoices(form, chosen)}
      <div><button class="primary">Create subscription</button></div>
      <p class="muted hint">The signing secret is generated and shown once, right after you create the subscription.</p>
    </form>
  </section>
</div>`;
}

export interface WebhookPageData {
  webhook: WebhookJson;
  /** The edit form after a refused save: what was typed, and why. */
  form?: FormState;
  chosen?: string[];
  deliveries: DeliveryPage;
  status?: DeliveryStatus;
  /** Present only in the answer that created the subscription or rotated its secret. */
  secret?: string;
  rotated?: boolean;
  message?: string;
}

function editForm(v: View, w: WebhookJson, form: FormState, chosen: readonly string[]): Html {
  return html`<section class="panel" id="webhook-settings">
    <details${attr('open', Object.keys(form.errors).length > 0 || Boolean(form.message))}>
    <summary><h2 class="inline">Change URL, name or events</h2></summary>
    <form method="post" action="${webhookPath(v, w.id)}/edit" class="stack" novalidate>
      ${csrfField(v)}${formMessage(form)}
      <div class="row">
        ${input(form, 'name', 'Name', { required: true, value: w.name })}
        <div class="field grow">${input(form, 'url', 'URL the events are posted to', { type: 'url', required: true, value: w.url })}</div>
      </div>
      ${eventChoices(form, chosen)}
      <div><button class="primary">Save</button></div>
      <p class="muted hint">Every attempt goes to the URL saved here, retries and "Send again" of earlier deliveries included.</p>
    </form></details>
  </section>`;
}

function secretPanel(w: WebhookJson, secret: string, rotated: boolean): Html {
  return html`<section class="panel secret-panel" hx-history="false" role="alert">
    <h2>${rotated ? 'New signing secret: copy it now' : 'Subscription created: copy the signing secret now'}</h2>
    <p><strong>This is the only time the secret is shown.</strong> Your receiver needs it to check the <code>webhook-signature</code> header of every delivery
      (any Standard Webhooks library verifies it: HMAC-SHA256 of <code>webhook-id.webhook-timestamp.body</code>, keyed with the base64 after <code>whsec_</code>).</p>
    ${rotated && w.previousSecretValidUntil
      ? html`<p>Until ${dateTime(w.previousSecretValidUntil)} every delivery carries two signatures, one with the previous secret and one with this one,
      so the receiver keeps accepting deliveries while you give it the new secret.</p>`
      : ''}
    ${copyBlock('secret', 'Signing secret', secret)}
  </section>`;
}

/** Rotation: a new secret, with the previous one still signing beside it for a day. */
function secretRotation(v: View, w: WebhookJson): Html {
  return html`<section class="panel" id="webhook-secret">
    <h2>Signing secret</h2>
    <p class="muted hint">${w.previousSecretValidUntil
      ? html`Rotated: the previous secret also signs deliveries until ${dateTime(w.previousSecretValidUntil)}.`
      : 'Lost the secret, or need to replace it? Rotating makes a new one and shows it once; the current one keeps signing beside it for 24 hours.'}</p>
    <form method="post" action="${webhookPath(v, w.id)}/rotate" hx-post="${webhookPath(v, w.id)}/rotate" hx-target="#settings" hx-swap="outerHTML">${csrfField(v)}
      <button data-confirm="Rotate: click again">Rotate signing secret</button></form>
  </section>`;
}

function statePanel(v: View, w: WebhookJson): Html {
  const path = webhookPath(v, w.id);
  if (!w.enabled) {
    return html`<section class="panel disabled-box" id="webhook-state">
      <h2>This subscription is disabled</h2>
      <p>${w.disabledAt ? html`Since ${dateTime(w.disabledAt)}. ` : ''}${
        w.disabledReason ? html`Why: <strong>${w.disabledReason}</strong>` : 'It was turned off by hand.'
      }</p>
      <p class="muted hint">No events are sent while it is disabled. Fix the receiver, then re-enable: new events are sent again, and you can send any failed delivery again from the log below.</p>
      <form method="post" action="${path}/enable">${csrfField(v)}<button class="primary">Re-enable</button></form>
    </section>`;
  }
  return html`<section class="panel" id="webhook-state">
    <h2>Send a test</h2>
    <p class="muted hint">Queues a <code>${TEST_EVENT}</code> event for this subscription only; it shows up in the log below within seconds.</p>
    <div class="row actions-row">
      <form method="post" action="${path}/test">${csrfField(v)}<button class="primary">Send test event</button></form>
      <form method="post" action="${path}/disable">${csrfField(v)}<button class="danger" data-confirm="Disable: click again">Disable</button></form>
      <form method="post" action="${path}/delete">${csrfField(v)}<button class="danger" data-confirm="Delete: click again">Delete subscription</button></form>
    </div>
    ${w.failingSince
      ? html`<p class="form-error">Deliveries have been failing since ${dateTime(w.failingSince)}. A subscription that fails for ${duration(DEFAULT_RETRY_POLICY.disableAfterMs / 1000)} without a single success is disabled.</p>`
      : ''}
  </section>`;
}

const STATUS_WORDS: Record<DeliveryStatus, string> = { pending: 'Pending', succeeded: 'Delivered', failed: 'Failed' };

function deliveryState(d: DeliveryJson): Html {
  if (d.status === 'succeeded') return html`<span class="ok">Delivered</span>`;
  if (d.status === 'failed') return html`<span class="fail">Failed (gave up)</span>`;
  if (d.attemptCount === 0) return html`<span class="muted">Waiting to be sent</span>`;
  return html`<span class="fail">Failed, will retry</span>`;
}

/** What went wrong, in words first; the technical detail stays beside it. */
const ERROR_WORDS: [RegExp, string][] = [
  [/^ECONNREFUSED/, 'Connection refused: nothing is listening at that address'],
  [/^(ENOTFOUND|EAI_AGAIN)/, 'The host name was not found'],
  [/^ECONNRESET|socket hang up/i, 'The receiver closed the connection'],
  [/^(ETIMEDOUT|ECONNABORTED)|timed? ?out/i, 'No answer in time'],
  [/^EHOSTUNREACH|^ENETUNREACH/, 'The receiver cannot be reached'],
  [/CERT|SSL|TLS/, 'The receiver\'s TLS certificate was refused'],
];

function errorInWords(d: DeliveryJson): Html {
  if (d.lastError) {
    const words = ERROR_WORDS.find(([pattern]) => pattern.test(d.lastError!))?.[1];
    return words ? html`${words} <span class="muted">(${d.lastError})</span>` : html`${d.lastError}`;
  }
  if (d.lastStatusCode !== null && (d.lastStatusCode < 200 || d.lastStatusCode >= 300)) return html`The receiver answered ${d.lastStatusCode}`;
  return html``;
}

function lastDuration(d: DeliveryJson): string {
  const last = d.attempts.at(-1); // attempts come oldest first
  return last ? `${last.durationMs} ms` : '';
}

function deliveryLog(v: View, w: WebhookJson, data: DeliveryPage, status: DeliveryStatus | undefined): Html {
  const path = webhookPath(v, w.id);
  return html`<section class="panel" id="delivery-log">
    <div class="section-head"><h2>Delivery log</h2>
    <form method="get" action="${path}" class="row">
      <label class="field inline"><span>Status</span><select name="status" class="autosubmit">
        <option value="">All</option>
        ${DELIVERY_STATUSES.map((s) => html`<option value="${s}"${attr('selected', s === status)}>${STATUS_WORDS[s]}</option>`)}
      </select></label><noscript><button>Filter</button></noscript>
    </form></div>
    ${data.deliveries.length === 0
      ? html`<p class="muted">${status ? 'No deliveries with this status.' : 'Nothing sent yet. Send a test event to try the receiver.'}</p>`
      : html`<table class="deals log">
      <thead><tr><th>Created</th><th>Event</th><th>Status</th><th class="num">Response</th><th class="num">Duration</th><th class="num">Attempts</th><th>Next retry</th><th>Last error</th><th></th></tr></thead>
      <tbody>${data.deliveries.map(
        (d) => html`<tr class="delivery delivery-${d.status}" data-delivery-id="${d.id}"><td>${dateTime(d.createdAt)}</td>
          <td>${EVENT_WORDS[d.event] ?? d.event}</td><td>${deliveryState(d)}</td>
          <td class="num">${d.lastStatusCode ?? html`<span class="muted">none</span>`}</td><td class="num">${lastDuration(d)}</td>
          <td class="num">${d.attemptCount}</td>
          <td>${d.nextAttemptAt ? dateTime(d.nextAttemptAt) : html`<span class="muted">none</span>`}</td>
          <td class="error-text">${errorInWords(d)}${d.attempts.length > 1
            ? html`<details><summary class="muted">All ${d.attempts.length} attempts</summary><ul class="attempts">${d.attempts.map(
                (a) => html`<li>${dateTime(a.attemptedAt)}: ${a.statusCode ?? 'no response'}, ${a.durationMs} ms${a.error ? html` (${a.error})` : ''}</li>`,
              )}</ul></details>`
            : ''}</td>
          <td>${w.enabled
            ? html`<form method="post" action="${path}/deliveries/${d.id}/redeliver">${csrfField(v)}<button class="small">Send again</button></form>`
            : ''}</td></tr>`,
      )}</tbody></table>`}
    <div class="pager">
      ${data.page > 1 ? html`<a href="${href(path, { status, page: data.page - 1 })}">Newer</a>` : ''}
      <span class="muted">${data.total} deliver${data.total === 1 ? 'y' : 'ies'}${data.pages > 1 ? `, page ${data.page} of ${data.pages}` : ''} · <a href="${href(path, { status, page: data.page > 1 ? data.page : undefined })}">Refresh</a></span>
      ${data.page < data.pages ? html`<a href="${href(path, { status, page: data.page + 1 })}">Older</a>` : ''}
    </div>
  </section>`;
}

export function webhookPage(v: View, data: WebhookPageData): Html {
  const w = data.webhook;
  return html`<div id="settings" class="settings-section">
  ${settingsHead(v, w.name, [{ label: 'Outbound webhooks', path: WEBHOOKS_PATH }])}
  <p>${stateBadge(w)} <span class="muted">created ${dateTime(w.createdAt)}</span></p>
  ${data.message ? html`<p class="form-error" role="alert">${data.message}</p>` : ''}
  ${data.secret ? secretPanel(w, data.secret, data.rotated === true) : ''}
  <section class="panel">
    ${copyBlock('webhook-url', 'Posts to', w.url)}
    <p><span class="muted">Events:</span> ${w.events.map((e) => EVENT_WORDS[e] ?? e).join(', ')}</p>
  </section>
  ${statePanel(v, w)}
  ${deliveryLog(v, w, data.deliveries, data.status)}
  ${editForm(v, w, data.form ?? emptyForm(), data.chosen ?? w.events)}
  ${secretRotation(v, w)}
</div>`;
}
