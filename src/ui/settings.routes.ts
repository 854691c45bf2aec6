import type { FastifyInstance } from 'fastify';
import { html, type Html, type Renderable } from './html.js';
import type { UiOptions } from './index.js';
import { layout, sendHtml, viewOf, type View } from './page.js';
import { settingsPermissions, settingsSectionsFor } from './settings.js';

/** The settings index, and the frame every settings page shares (the side menu of the sections this user sees). */

export function settingsPage(view: View, title: string, currentPath: string, body: Renderable, notice?: string): Html {
  const sections = settingsSectionsFor(view);
  const { base } = view;
  return layout(
    view,
    title,
    html`<div class="settings">
  <nav class="settings-nav" aria-label="Settings">
    <a href="${base}/service/settings" class="${currentPath === '/service/settings' ? 'active' : ''}">All settings</a>
    ${sections.map((s) => html`<a href="${base}${s.path}" class="${currentPath.startsWith(s.path) ? 'active' : ''}">${s.label}</a>`)}
  </nav>
  <div class="settings-body">${notice ? html`<p class="notice" role="status">${notice}</p>` : ''}${body}</div>
</div>`,
    '/service/settings',
    { scripts: ['settings.js'] },
  );
}

/** What a redirect after a successful form says (`?done=…`): fixed words, never the query's text. */
export function doneNotice(query: unknown, messages: Record<string, string>): string | undefined {
  const done = (query as Record<string, unknown> | undefined)?.done;
  return typeof done === 'string' && Object.hasOwn(messages, done) ? messages[done] : undefined;
}

export async function settingsRoutes(app: FastifyInstance, _deps: UiOptions): Promise<void> {
  const base = app.prefix;
  app.get('/service/settings', { config: { permission: settingsPermissions(), page: 'page' }, schema: { hide: true } }, async (request, reply) => {
    const view = viewOf(request, base);
    const sections = settingsSectionsFor(view);
    return sendHtml(
      reply,
      settingsPage(
        view,
        'Settings',
        '/service/settings',
        html`<h1>Settings</h1>
<ul class="section-cards">
  ${sections.map((s) => html`<li class="panel"><a href="${base}${s.path}"><strong>${s.label}</strong></a><p class="muted">${s.description}</p></li>`)}
</ul>
${view.managesUsers ? html`<p class="muted">Your own password: <a href="${base}/service/account">Your account</a>.</p>` : ''}`,
      ),
    );
  });
}
