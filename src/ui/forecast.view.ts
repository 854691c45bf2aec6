import type { CurrencyForecast, Forecast } from '../domain/deals/forecast.service.js';
import type { PipelineJson } from '../domain/pipelines/pipelines.service.js';
import { csvTable, type CsvCell } from './csv.js';
import { fieldErrors, formMessage, type FormState } from './forms.js';
import { attr, href, html, type Html } from './html.js';
import { money, type View } from './page.js';

/**
 * The forecast page: the period form, then per currency the headline figures,
 * three charts (drawn by forecast.js from the JSON in #forecast-data) and the
 * same numbers as tables; the CSV download is those tables in one.
 */

export interface ForecastPageData {
  pipelines: PipelineJson[];
  pipelineId: number | undefined;
  form: FormState;
  forecast: Forecast | null;
}

const NO_OWNER = 'No owner';
export const percent = (rate: number | null) => (rate === null ? '—' : `${(rate * 100).toFixed(1)}%`);
export const days = (value: number | null) => (value === null ? '—' : `${value.toFixed(1)} days`);
export const monthLabel = (month: string) =>
  new Date(`${month}-01T00:00:00Z`).toLocaleDateString('en-US', { month: 'short', year: 'numeric', timeZone: 'UTC' });

function headline(c: CurrencyForecast): Html {
  const tile = (label: string, value: string, note: string) =>
    html`<div class="tile"><span class="tile-label">${label}</span><strong>${value}</strong><span class="muted">${note}</span></div>`;
  return html`<div class="tiles">
    ${tile('Open', money(c.open.amount, c.currency), `${c.open.count} deal${c.open.count === 1 ? '' : 's'} closing in the period`)}
    ${tile('Weighted', money(c.open.weighted, c.currency), 'amount × stage probability')}
    ${tile('Won', money(c.won.amount, c.currency), `${c.won.count} deal${c.won.count === 1 ? '' : 's'} won in the period`)}
    ${tile('Win rate', percent(c.winRate), `${c.won.count} won, ${c.lost.count} lost`)}
    ${tile('Average days to win', days(c.averageDaysToWin), 'from creation to won')}
  </div>`;
}

function monthsTable(c: CurrencyForecast): Html {
  const m = (amount: number) => money(amount, c.currency);
  return html`<table class="deals forecast-table" data-table="months">
  <caption>By month, ${c.currency}: open deals by expected close month, won deals by the month they were won</caption>
  <thead><tr><th scope="col">Month</th><th scope="col" class="num">Open deals</th><th scope="col" class="num">Open amount</th><th scope="col" class="num">Weighted amount</th><th scope="col" class="num">Won deals</th><th scope="col" class="num">Won amount</th></tr></thead>
  <tbody>${c.months.map(
    (row) => html`<tr data-month="${row.month}"><th scope="row">${monthLabel(row.month)}</th><td class="num">${row.open.count}</td><td class="num">${m(row.open.amount)}</td><td class="num">${m(row.open.weighted)}</td><td class="num">${row.won.count}</td><td class="num">${m(row.won.amount)}</td></tr>`,
  )}</tbody>
  <tfoot><tr data-month="total"><th scope="row">Period</th><td class="num">${c.open.count}</td><td class="num">${m(c.open.amount)}</td><td class="num">${m(c.open.weighted)}</td><td class="num">${c.won.count}</td><td class="num">${m(c.won.amount)}</td></tr></tfoot>
</table>`;
}

interface OwnerRow {
  name: string;
  figures: CurrencyForecast;
}

/** Each owner's figures in one currency (owners without deals in it are left out). */
export function ownerRows(forecast: Forecast, currency: string): OwnerRow[] {
  return forecast.owners.flatMap(({ owner, currencies }) => {
    const figures = currencies.find((c) => c.currency === currency);
    return figures ? [{ name: owner?.name ?? NO_OWNER, figures }] : [];
  });
}

function ownersTable(forecast: Forecast, c: CurrencyForecast): Html {
  const row = (name: Html | string, f: CurrencyForecast, total = false) =>
    html`<tr${total ? html` data-owner-total` : ''}><th scope="row">${name}</th><td class="num">${f.open.count}</td><td class="num">${money(f.open.amount, c.currency)}</td><td class="num">${money(f.open.weighted, c.currency)}</td><td class="num">${f.won.count}</td><td class="num">${money(f.won.amount, c.currency)}</td><td class="num">${f.lost.count}</td><td class="num">${percent(f.winRate)}</td><td class="num">${days(f.averageDaysToWin)}</td></tr>`;
  return html`<table class="deals forecast-table" data-table="owners">
  <caption>By owner, ${c.currency}</caption>
  <thead><tr><th scope="col">Owner</th><th scope="col" class="num">Open deals</th><th scope="col" class="num">Open amount</th><th scope="col" class="num">Weighted amount</th><th scope="col" class="num">Won deals</th><th scope="col" class="num">Won amount</th><th scope="col" class="num">Lost deals</th><th scope="col" class="num">Win rate</th><th scope="col" class="num">Average days to win</th></tr></thead>
  <tbody>${ownerRows(forecast, c.currency).map((o) => row(o.name, o.figures))}</tbody>
  <tfoot>${row('All owners', c, true)}</tfoot>
</table>`;
}

function currencySection(forecast: Forecast, c: CurrencyForecast): Html {
  const chart = (kind: string, title: string, note: string) =>
    html`<figure class="chart-box"><figcaption><strong>${title}</strong> <span class="muted">${note}</span></figcaption>
      <div class="chart" data-chart="${kind}" data-currency="${c.currency}" role="img" aria-label="${title} (${c.currency}); the same figures are in the tables below"></div></figure>`;
  return html`<section class="panel forecast-currency" data-currency="${c.currency}" aria-labelledby="forecast-${c.currency}">
  <h2 id="forecast-${c.currency}">${c.currency}</h2>
  ${headline(c)}
  <div class="charts">
    ${chart('months', 'Open, weighted and won by month', 'open and weighted by expected close month, won by month won')}
    ${chart('winRate', 'Win rate by owner', 'won ÷ (won + lost), deals closed in the period')}
    ${chart('days', 'Average days to win by owner', 'from creation to won')}
  </div>
  <div class="tables">${monthsTable(c)}${ownersTable(forecast, c)}</div>
</section>`;
}

export function forecastPage(view: View, data: ForecastPageData): Html {
  const { form, forecast } = data;
  const value = (name: string) => form.values[name] ?? '';
  const monthInput = (name: string, label: string) =>
    html`<label class="field inline${form.errors[name] ? ' invalid' : ''}"><span>${label}</span><input type="month" name="${name}" value="${value(name)}" required>${fieldErrors(form, name)}</label>`;
  const csv = forecast
    ? href(`${view.base}/service/forecast.csv`, { pipeline: forecast.pipeline.id, from: forecast.from.slice(0, 7), to: forecast.to.slice(0, 7) })
    : null;
  const period = forecast ? `${monthLabel(forecast.months[0]!)} – ${monthLabel(forecast.months.at(-1)!)}` : '';
  return html`<div class="forecast-head"><h1>Forecast${forecast ? html` <span class="muted">· ${forecast.pipeline.name} · ${period}</span>` : ''}</h1>
  ${csv ? html`<a class="button" href="${csv}" download>Download CSV</a>` : ''}</div>
<form class="filters" method="get" action="${view.base}/service/forecast">
  <label class="field inline"><span>Pipeline</span><select name="pipeline" class="autosubmit">
    ${data.pipelines.map((p) => html`<option value="${p.id}"${attr('selected', p.id === data.pipelineId)}>${p.name}${p.isDefault ? ' (default)' : ''}</option>`)}
  </select>${fieldErrors(form, 'pipeline')}</label>
  ${monthInput('from', 'From')}
  ${monthInput('to', 'To')}
  <button class="primary">Show</button>
  ${formMessage(form)}
</form>
${data.pipelines.length === 0 ? html`<p class="panel">No pipeline is visible to you.</p>` : ''}
${forecast
    ? forecast.totals.length === 0
      ? html`<p class="panel">No deal of this pipeline closes, was won or was lost in this period.</p>`
      : html`<div id="forecast-data" data-forecast="${JSON.stringify(forecast)}" hidden></div>
${forecast.totals.map((c) => currencySection(forecast, c))}`
    : ''}`;
}

/** The tables as one CSV: a row per month, per owner, and the period's total, for each currency. */
export function forecastCsv(forecast: Forecast): string {
  const rows: CsvCell[][] = [
    ['Pipeline', 'Currency', 'Row', 'Name', 'Open deals', 'Open amount', 'Weighted amount', 'Won deals', 'Won amount', 'Lost deals', 'Win rate', 'Average days to win'],
  ];
  const figures = (f: CurrencyForecast): CsvCell[] => [f.open.count, f.open.amount, f.open.weighted, f.won.count, f.won.amount, f.lost.count, f.winRate, f.averageDaysToWin];
  for (const c of forecast.totals) {
    const pipeline = forecast.pipeline.name;
    for (const m of c.months) rows.push([pipeline, c.currency, 'Month', m.month, m.open.count, m.open.amount, m.open.weighted, m.won.count, m.won.amount, null, null, null]);
    for (const o of ownerRows(forecast, c.currency)) rows.push([pipeline, c.currency, 'Owner', o.name, ...figures(o.figures)]);
    rows.push([pipeline, c.currency, 'Total', `${forecast.from} to ${forecast.to}`, ...figures(c)]);
  }
  return csvTable(rows);
}
