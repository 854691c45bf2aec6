import type { PipelineJson } from '../domain/pipelines/pipelines.service.js';
import type { SourceJson } from '../domain/inbound/sources.service.js';
import { LOG_OUTCOMES, type LogOutcome } from '../domain/inbound/sources.schemas.js';
import { FIELD_TARGETS, type FieldMap, type FieldTarget } from '../domain/inbound/field-map.js';
import type { HostUser } from '../host/port.js';
import { emptyForm, fieldErrors, formMessage, input, select, type FormState } from './forms.js';
import { attr, href, html, type Html } from './html.js';
import { csrfField, dateTime, type View } from './page.js';
import { userPicker } from './user-picker.js';

/**
 * Inbound webhook sources as pages: the list with a create form, and one
 * source with its endpoint, sending examples, settings, secret rotation and
 * receive log. A secret appears only in the answer that created it.
 */

export const INBOUND_PATH = '/service/settings/inbound';

export interface LogEntryJson {
  id: number;
  receivedAt: string;
  status: number;
  outcome: LogOutcome;
  error: string | null;
  deal: { id: number } | null;
}

const sourcePath = (v: View, id: string) => `${v.base}${INBOUND_PATH}/${encodeURIComponent(id)}`;

/** The settings pages' shared header: where you are, and a way back to the settings index. */
export function settingsHead(v: View, title: string, trail: { label: string; path: string }[] = []): Html {
  return html`<nav class="crumbs" aria-label="Breadcrumb"><a href="${v.base}/service/settings">Settings</a>${trail.map(
    (step) => html` › <a href="${v.base}${step.path}">${step.label}</a>`,
  )}</nav><h1>${title}</h1>`;
}

/** A read-only block of text with a copy button (settings.js does the copying). */
export function copyBlock(id: string, label: string, text: string, options: { multiline?: boolean } = {}): Html {
  return html`<div class="copy-block">
    <div class="copy-head"><span>${label}</span><button type="button" class="small copy" data-copy="${id}" aria-label="Copy ${label}">Copy</button></div>
    ${options.multiline ? html`<pre id="${id}" class="code">${text}</pre>` : html`<code id="${id}" class="code one-line">${text}</code>`}
  </div>`;
}

const EXAMPLE_BODY = {
  title: 'Test deal from the curl example',
  amount: 1500,
  contact: { email: 'ann@example.com', first_name: 'Ann' },
  custom_fields: { campaign: 'settings-page' },
};

/**
 * The signed curl example: bash, openssl and curl only. Single quotes around
 * the values are safe: the endpoint, the secret (hex) and the body hold none.
 */
export function curlExample(endpoint: string, secret: string | undefined): string {
  const body = JSON.stringify(EXAMPLE_BODY);
  return [
    `ENDPOINT='${endpoint}'`,
    `SECRET='${secret ?? 'PASTE-THE-SECRET-HERE'}'`,
    `BODY='${body}'`,
    `SIG=$(printf '%s' "$BODY" | openssl dgst -sha256 -hmac "$SECRET" | sed 's/^.*= //')`,
    `curl -sS -X POST "$ENDPOINT" -H 'Content-Type: application/json' \\`,
    `  -H "X-Service-Signature: sha256=$SIG" --data-binary "$BODY"`,
  ].join('\n');
}

export function nodeExample(endpoint: string, secret: string | undefined): string {
  return [
    `// Node 18 or later, saved as send.mjs and run with: node send.mjs`,
    `import { createHmac } from 'node:crypto';`,
    ``,
    `const endpoint = ${JSON.stringify(endpoint)};`,
    `const secret = ${JSON.stringify(secret ?? 'PASTE-THE-SECRET-HERE')};`,
    `// Sign exactly the string you send: serialize once.`,
    `const body = JSON.stringify({`,
    `  external_id: 'order-1042',`,
    `  title: 'Acme renewal',`,
    `  amount: 1500.5,`,
    `  contact: { email: 'ann@example.com', first_name: 'Ann' },`,
    `});`,
    `const signature = 'sha256=' + createHmac('sha256', secret).update(body).digest('hex');`,
    `const res = await fetch(endpoint, {`,
    `  method: 'POST',`,
    `  headers: { 'content-type': 'application/json', 'x-service-signature': signature },`,
    `  body,`,
    `});`,
    `console.log(res.status, await res.json());`,
  ].join('\n');
}

function pipelineChoices(pipelines: PipelineJson[]) {
  return pipelines.map((p) => ({ value: p.id, label: p.isDefault ? `${p.name} (default)` : p.name }));
}

/** The stages of every pipeline, grouped; the server checks the one chosen belongs to the chosen pipeline. */
function stageSelect(form: FormState, pipelines: PipelineJson[], current: number | null | undefined): Html {
  const name = 'source[stage]';
  const chosen = form.values[name] ?? (current === null || current === undefined ? '' : String(current));
  return html`<label class="field${form.errors[name] ? ' invalid' : ''}"><span>Stage new deals start in</span><select name="${name}">
    <option value="">The pipeline's first stage</option>
    ${pipelines.map(
      (p) => html`<optgroup label="${p.name}">${p.stages.map(
        (stage) => html`<option value="${stage.id}"${attr('selected', String(stage.id) === chosen)}>${stage.name}</option>`,
      )}</optgroup>`,
    )}
  </select>${fieldErrors(form, name)}</label>`;
}

function ownerSelect(v: View, form: FormState, users: HostUser[], current: { id: number; name: string } | null | undefined): Html {
  return userPicker(v, form, 'source[owner]', 'Owner of new deals', users, current, 'Nobody');
}

const defaultsText = (source: SourceJson) =>
  `${source.stage ? `stage ${source.stage.name}` : 'first stage'}, ${source.owner ? `owner ${source.owner.name}` : 'no owner'}`;

const state = (enabled: boolean) => (enabled ? html`<span class="badge won">Enabled</span>` : html`<span class="badge lost">Disabled</span>`);

export function sourceList(v: View, sources: SourceJson[], pipelines: PipelineJson[], users: HostUser[], form: FormState = emptyForm()): Html {
  const defaultPipeline = pipelines.find((p) => p.isDefault)?.id;
  return html`<div id="settings" class="settings-section">
  ${settingsHead(v, 'Inbound webhook sources')}
  <p class="muted lead">A source is an endpoint another system (a web form, a CRM, a billing system) posts signed JSON to; each post creates a deal, or updates the one with the same <code>external_id</code>.</p>
  ${sources.length === 0
    ? html`<p class="panel">No sources yet. Create one below to get its endpoint URL and secret.</p>`
    : html`<table class="deals settings-table">
    <thead><tr><th>Name</th><th>Pipeline</th><th>State</th><th>Last receive</th><th>Endpoint URL</th></tr></thead>
    <tbody>${sources.map(
      (s) => html`<tr><td class="title"><a href="${sourcePath(v, s.id)}">${s.name}</a></td><td>${s.pipeline.name} <span class="muted">(${defaultsText(s)})</span></td><td>${state(s.enabled)}</td>
        <td>${s.lastReceivedAt ? dateTime(s.lastReceivedAt) : html`<span class="muted">never</span>`}</td><td class="url"><code>${s.endpointUrl}</code></td></tr>`,
    )}</tbody></table>`}
  <section class="panel" id="new-source">
    <h2>New source</h2>
    <form method="post" action="${v.base}${INBOUND_PATH}/new" hx-post="${v.base}${INBOUND_PATH}/new" hx-target="#settings" hx-swap="outerHTML" class="stack" novalidate>
      ${csrfField(v)}${formMessage(form)}
      <div class="row">
        ${input(form, 'source[name]', 'Name', { required: true, placeholder: 'Website contact form' })}
        ${select(form, 'source[pipeline]', 'Pipeline new deals go to', pipelineChoices(pipelines), defaultPipeline)}
        ${stageSelect(form, pipelines, null)}
        ${ownerSelect(v, form, users, null)}
        <button class="primary">Create source</button>
      </div>
      <p class="muted hint">The secret is shown once, right after you create the source.</p>
    </form>
  </section>
</div>`;
}

export interface SourcePageData {
  source: SourceJson;
  pipelines: PipelineJson[];
  users: HostUser[];
  log: LogEntryJson[];
  outcome?: LogOutcome;
  /** Present only in the answer that created or rotated the secret. */
  secret?: { value: string; rotated: boolean };
  form?: FormState;
}

function secretPanel(source: SourceJson, secret: { value: string; rotated: boolean }): Html {
  // hx-history="false": htmx never keeps this page in its history cache (localStorage).
  return html`<section class="panel secret-panel" hx-history="false" role="alert">
    <h2>${secret.rotated ? 'New secret' : 'Your source is ready'}: copy the secret now</h2>
    <p><strong>This is the only time the secret is shown.</strong> Store it where the sending system keeps its credentials; if you lose it, rotate the secret to get a new one.</p>
    ${secret.rotated && source.previousSecretExpiresAt
      ? html`<p>The previous secret keeps working until <strong>${dateTime(source.previousSecretExpiresAt)}</strong> (24 hours), so you can switch senders over without losing requests.</p>`
      : ''}
    ${copyBlock('secret', 'Secret', secret.value)}
    <p class="muted hint">The examples below already contain the endpoint and this secret: paste the curl example into a terminal (bash, with openssl and curl) to send a test deal.</p>
  </section>`;
}

function examples(source: SourceJson, secret: string | undefined): Html {
  return html`<section class="panel" id="examples">
    <h2>Send a deal</h2>
    <p>POST a JSON object to the endpoint URL, signed in the header <code>X-Service-Signature: sha256=…</code>: the hex HMAC-SHA256 of the exact body bytes, keyed with the secret.
      Fields: <code>title</code>, <code>amount</code>, <code>close_date</code> (YYYY-MM-DD), <code>contact</code> (<code>email</code>, <code>first_name</code>, <code>last_name</code>, <code>company</code>), <code>custom_fields</code>, and <code>external_id</code>: a later post with the same one updates that deal.</p>
    ${secret ? '' : html`<p class="muted hint">The secret is not shown again: in the examples, replace <code>PASTE-THE-SECRET-HERE</code> with the secret you saved (or rotate it to get a new one).</p>`}
    ${copyBlock('curl-example', 'curl (bash, openssl)', curlExample(source.endpointUrl, secret), { multiline: true })}
    ${copyBlock('node-example', 'Node.js', nodeExample(source.endpointUrl, secret), { multiline: true })}
    <p class="muted hint">A byte-identical body sent again within 24 hours gets the first answer and changes nothing; change the body (or send an <code>Idempotency-Key</code> header) to create another deal.</p>
  </section>`;
}

const TARGET_WORDS: Record<FieldTarget, string> = {
  title: 'Title',
  amount: 'Amount (a JSON number)',
  close_date: 'Close date (YYYY-MM-DD)',
  external_id: 'External id',
  custom_fields: 'Custom fields (an object)',
  contact_email: 'Contact email',
  contact_first_name: 'Contact first name',
  contact_last_name: 'Contact last name',
  contact_company: 'Contact company',
};

/** Where each deal field is read from; the placeholder is the name used when nothing is mapped. */
function fieldMapping(form: FormState, fields: FieldMap): Html {
  const mapped = Object.keys(fields).length;
  return html`<details class="mapping"${attr('open', mapped > 0 || Object.keys(form.errors).some((k) => k.startsWith('source[fields]')))}>
    <summary>Field mapping ${mapped > 0 ? html`<span class="muted">(${mapped} mapped)</span>` : html`<span class="muted">(none: fields are read under their own names)</span>`}</summary>
    <p class="muted hint">If the sender's JSON uses other names, say where each deal field is found, as a dot path such as <code>lead.email</code>. Leave a field empty to read it under its own name.</p>
    <div class="mapping-grid">${FIELD_TARGETS.map((target) =>
      input(form, `source[fields][${target}]`, TARGET_WORDS[target], {
        value: fields[target] ?? '',
        placeholder: target.startsWith('contact_') ? `contact.${target.slice('contact_'.length)}` : target,
      }),
    )}</div>
  </details>`;
}

function settingsForm(v: View, source: SourceJson, pipelines: PipelineJson[], users: HostUser[], form: FormState): Html {
  const path = sourcePath(v, source.id);
  return html`<section class="panel" id="source-settings">
    <h2>Settings</h2>
    <form method="post" action="${path}/edit" class="stack" novalidate>
      ${csrfField(v)}${formMessage(form)}
      <div class="row">
        ${input(form, 'source[name]', 'Name', { required: true, value: source.name })}
        ${select(form, 'source[pipeline]', 'Pipeline new deals go to', pipelineChoices(pipelines), source.pipeline.id)}
        ${stageSelect(form, pipelines, source.stage?.id)}
        ${ownerSelect(v, form, users, source.owner)}
      </div>
      ${fieldMapping(form, source.fields)}
      <div><button class="primary">Save</button></div>
      <p class="muted hint">These apply to deals the source creates; a post with a known <code>external_id</code> updates that deal wherever it is. Choosing another pipeline without a stage of it starts deals in its first stage.</p>
    </form>
    <div class="row actions-row">
      <form method="post" action="${path}/${source.enabled ? 'disable' : 'enable'}">${csrfField(v)}
        <button class="${source.enabled ? 'danger' : 'primary'}">${source.enabled ? 'Disable source' : 'Enable source'}</button></form>
      <form method="post" action="${path}/rotate" hx-post="${path}/rotate" hx-target="#settings" hx-swap="outerHTML">${csrfField(v)}
        <button data-confirm="Rotate: click again">Rotate secret</button></form>
      <form method="post" action="${path}/delete">${csrfField(v)}
        <button class="danger" data-confirm="Delete: click again">Delete source</button></form>
    </div>
    <p class="muted hint">${source.enabled ? 'A disabled source answers 404 to every post.' : 'This source is disabled: every post gets 404 until you enable it.'}
      Rotating makes a new secret (shown once); the current one keeps working for 24 hours. Deleting keeps the deals it made.</p>
    ${source.previousSecretExpiresAt
      ? html`<p class="notice">A previous secret still works until <strong>${dateTime(source.previousSecretExpiresAt)}</strong>.</p>`
      : ''}
  </section>`;
}

const OUTCOME_WORDS: Record<LogOutcome, string> = {
  created: 'Created a deal',
  updated: 'Updated a deal',
  replayed: 'Repeat: first answer sent again',
  rejected: 'Refused',
};

function receiveLog(v: View, source: SourceJson, log: LogEntryJson[], outcome: LogOutcome | undefined): Html {
  const path = sourcePath(v, source.id);
  return html`<section class="panel" id="receive-log">
    <div class="section-head"><h2>Receive log</h2>
    <form method="get" action="${path}" class="row">
      <label class="field inline"><span>Result</span><select name="outcome" class="autosubmit">
        <option value="">All</option>
        ${LOG_OUTCOMES.map((o) => html`<option value="${o}"${attr('selected', o === outcome)}>${OUTCOME_WORDS[o]}</option>`)}
      </select></label><noscript><button>Filter</button></noscript>
    </form></div>
    ${log.length === 0
      ? html`<p class="muted">${outcome ? 'No receives with this result.' : 'Nothing received yet. Send the curl example above to see it here.'}</p>`
      : html`<table class="deals log">
      <thead><tr><th>Time</th><th>Result</th><th class="num">Status</th><th>Error</th><th>Deal</th></tr></thead>
      <tbody>${log.map(
        (entry) => html`<tr class="outcome-${entry.outcome}"><td>${dateTime(entry.receivedAt)}</td>
          <td class="${entry.outcome === 'rejected' ? 'fail' : 'ok'}">${OUTCOME_WORDS[entry.outcome]}</td>
          <td class="num">${entry.status}</td><td class="error-text">${entry.error ?? ''}</td>
          <td>${entry.deal ? html`<a href="${v.base}/service/${entry.deal.id}/view">Deal #${entry.deal.id}</a>` : html`<span class="muted">none</span>`}</td></tr>`,
      )}</tbody></table>`}
    <p class="muted hint">The newest 50 receives${outcome ? ' with this result' : ''}. <a href="${href(path, { outcome })}">Refresh</a></p>
  </section>`;
}

export function sourcePage(v: View, data: SourcePageData): Html {
  const { source } = data;
  return html`<div id="settings" class="settings-section">
  ${settingsHead(v, source.name, [{ label: 'Inbound sources', path: INBOUND_PATH }])}
  <p>${state(source.enabled)} <span class="muted">New deals: ${source.pipeline.name}, ${defaultsText(source)} · created ${dateTime(source.createdAt)} · last receive ${
    source.lastReceivedAt ? dateTime(source.lastReceivedAt) : 'never'
  }</span></p>
  ${data.secret ? secretPanel(source, data.secret) : ''}
  <section class="panel">${copyBlock('endpoint-url', 'Endpoint URL', source.endpointUrl)}</section>
  ${examples(source, data.secret?.value)}
  ${settingsForm(v, source, data.pipelines, data.users, data.form ?? emptyForm())}
  ${receiveLog(v, source, data.log, data.outcome)}
</div>`;
}
