import type { FastifyReply, FastifyRequest } from 'fastify';
import { can, type Actor, type Permission } from '../host/permissions.js';
import { CSRF_FIELD } from '../http/session.js';
import { html, type Html, type Renderable } from './html.js';
import { settingsSectionsFor } from './settings.js';

/**
 * The page frame, the headers every page carries, and small formatters.
 * All script is in served files and no markup needs inline style, so the
 * Content-Security-Policy allows only our own origin for both.
 */

export const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "object-src 'none'",
].join('; ');

/** Who is looking, and where the service is mounted (every link carries the prefix). */
export interface View {
  base: string;
  actor: Actor;
  /** The session's CSRF token; empty for Basic-authenticated browsers (they are checked by origin instead). */
  csrf: string;
  /** Users and roles are managed here (the built-in host), so their settings pages and "Your account" exist. */
  managesUsers: boolean;
  /** Still on a password someone else chose: every page says to change it. */
  mustChangePassword: boolean;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The host's `managesUsers`, decorated by the plugin so every page knows which settings exist. */
    hostManagesUsers: boolean;
  }
}

export function viewOf(request: FastifyRequest, base: string): View {
  return {
    base,
    actor: request.actor!,
    csrf: request.pageSession?.csrf ?? '',
    managesUsers: request.hostManagesUsers,
    mustChangePassword: request.pageSession?.mustChangePassword ?? false,
  };
}

export const may = (view: View, permission: Permission) => can(view.actor, permission);

export function sendHtml(reply: FastifyReply, body: Html, status = 200): FastifyReply {
  return reply
    .code(status)
    .header('Content-Type', 'text/html; charset=utf-8')
    .header('Content-Security-Policy', CSP)
    .header('X-Content-Type-Options', 'nosniff')
    .header('Referrer-Policy', 'same-origin')
    .header('Cache-Control', 'no-store')
    .header('Vary', 'Accept, Cookie')
    .send(body.value);
}

export const csrfField = (view: { csrf: string }) => html`<input type="hidden" name="${CSRF_FIELD}" value="${view.csrf}">`;

const HTMX_CONFIG = '{"includeIndicatorStyles":false,"allowEval":false,"allowScriptTags":false,"selfRequestsOnly":true}';

/** Scripts and styles (served names under /service/assets/) that one page needs beyond the common ones. */
export interface PageAssets {
  scripts?: string[];
  styles?: string[];
}

export function layout(
  view: View | { base: string; csrf: string; actor?: undefined },
  title: string,
  body: Renderable,
  current = '',
  assets: PageAssets = {},
): Html {
  const { base } = view;
  const mayViewDeals = view.actor ? can(view.actor, 'service:deals:viewown') || can(view.actor, 'service:deals:viewother') : false;
  const nav = (path: string, label: string) =>
    html`<a href="${base}${path}" class="${current === path ? 'active' : ''}">${label}</a>`;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Deals</title>
<meta name="csrf-token" content="${view.csrf}">
<meta name="htmx-config" content="${HTMX_CONFIG}">
<link rel="icon" href="data:,">
${(assets.styles ?? []).map((name) => html`<link rel="stylesheet" href="${base}/service/assets/${name}">
`)}<link rel="stylesheet" href="${base}/service/assets/app.css">
<script src="${base}/service/assets/htmx.min.js" defer></script>
<script src="${base}/service/assets/sortable.min.js" defer></script>
<script src="${base}/service/assets/app.js" defer></script>
${(assets.scripts ?? []).map((name) => html`<script src="${base}/service/assets/${name}" defer></script>
`)}
</head>
<body>
<header class="topbar">
  <a class="brand" href="${base}/service/board">Deals</a>
  ${view.actor
    ? html`<nav>${nav('/service/board', 'Board')}${nav('/service/deals', 'All deals')}${mayViewDeals ? nav('/service/forecast', 'Forecast') : ''}${
        'managesUsers' in view && settingsSectionsFor(view).length > 0 ? nav('/service/settings', 'Settings') : ''
      }</nav>
  <div class="who">${
    'managesUsers' in view && view.managesUsers
      ? html`<a href="${base}/service/account" class="${current === '/service/account' ? 'active' : ''}" title="Your account">${view.actor.name}</a>`
      : html`<span>${view.actor.name}</span>`
  }
    <form method="post" action="${base}/service/logout">${csrfField(view)}<button class="link">Log out</button></form></div>`
    : ''}
</header>
<div id="toast" class="toast" role="status" aria-live="polite" hidden></div>
${'mustChangePassword' in view && view.mustChangePassword && view.managesUsers && current !== '/service/account'
  ? html`<p class="banner" role="alert">You are still using the password you were given. <a href="${base}/service/account">Choose your own password</a> so that nobody else knows it.</p>`
  : ''}
<main>${body}</main>
</body>
</html>`;
}

export function errorPage(view: View | { base: string; csrf: string }, status: number, message: string): Html {
  const title = status === 403 ? 'Not allowed' : status === 404 ? 'Not found' : status >= 500 ? 'Something went wrong' : 'Cannot do that';
  return layout(view, title, html`<section class="panel narrow"><h1>${title}</h1><p>${message}</p>
    <p><a href="${view.base}/service/board">Back to the board</a></p></section>`);
}

/* ---- formatting ---- */

const moneyFormats = new Map<string, Intl.NumberFormat>();
export function money(amount: number, currency: string): string {
  let format = moneyFormats.get(currency);
  if (!format) {
    format = new Intl.NumberFormat('en-US', { style: 'currency', currency, maximumFractionDigits: 2 });
    moneyFormats.set(currency, format);
  }
  return format.format(amount);
}

export const today = () => new Date().toISOString().slice(0, 10);

export const daysSince = (timestamp: string) => Math.max(0, Math.floor((Date.now() - new Date(timestamp).getTime()) / 86_400_000));

export function duration(seconds: number): string {
  if (seconds < 3600) return `${Math.max(1, Math.round(seconds / 60))} min`;
  if (seconds < 86_400) return `${Math.round(seconds / 3600)} h`;
  const days = Math.round(seconds / 86_400);
  return `${days} day${days === 1 ? '' : 's'}`;
}

export const dateTime = (iso: string) => iso.slice(0, 16).replace('T', ' ') + ' UTC';

/** A toast message for htmx (HX-Trigger). Headers are ASCII only: anything else travels as JSON \u escapes. */
export function toastHeader(reply: FastifyReply, message: string): void {
  const json = JSON.stringify({ toast: message }).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  void reply.header('HX-Trigger', json);
}

/**
 * A stage's colour as a small square: an SVG data image (the CSP allows data:
 * images, not inline style), only for a checked #rrggbb value.
 */
export function colorSwatch(color: string | null | undefined, label = ''): Html {
  if (!color || !/^#[0-9a-f]{6}$/.test(color)) return html``;
  const svg = `data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' width='12' height='12'%3E%3Crect width='12' height='12' rx='3' fill='%23${color.slice(1)}'/%3E%3C/svg%3E`;
  return html`<img class="swatch" src="${svg}" width="12" height="12" alt="${label}">`;
}
