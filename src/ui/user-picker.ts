import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { DEAL_PERMISSIONS } from '../domain/deals/deal-access.js';
import type { HostUser } from '../host/port.js';
import { id } from '../http/schemas.js';
import { check, select, selectOptions, type FormState } from './forms.js';
import { html, type Html } from './html.js';
import type { UiOptions } from './index.js';
import { sendHtml, type View } from './page.js';

/**
 * Owner and assignee pickers: a select of the first PICKER_USERS users, and
 * for a host with more, a search beside it that fills the select with the
 * users matching what is typed (the host's own user search), keeping the
 * current one on offer and chosen.
 */

/** How many users a picker lists at first; a host with more gets the search as well. */
export const PICKER_USERS = 200;

type Person = { id: number; name: string };

/** The choices of a user picker: the users found, and the current one even when not among them. */
function userChoices(users: HostUser[], current: Person | null | undefined) {
  const choices = users.map((u) => ({ value: u.id, label: u.name }));
  if (current && !users.some((u) => u.id === current.id)) choices.push({ value: current.id, label: current.name });
  return choices;
}

/**
 * The search beside a picker's select: fills it with the users matching what is
 * typed. It belongs to no form (`form=""`), so it is never sent with the form it
 * sits in, a filter's GET or a batch's POST.
 */
function pickerSearch(view: View, label: string, empty: string, current: Person | null | undefined): Html {
  const vals = JSON.stringify({ empty, current: current?.id ?? '', currentName: current?.name ?? '' });
  return html`<input type="search" name="q" form="" class="picker-search" placeholder="Not listed? Type a name" aria-label="Find a person for ${label}" autocomplete="off"
      hx-get="${view.base}/service/ui/users/options" hx-vals="${vals}" hx-trigger="input changed delay:300ms, search" hx-target="previous select" hx-swap="innerHTML">`;
}

/** `users`: the first PICKER_USERS of the host (`host.users.search({ limit: PICKER_USERS })`). */
export function userPicker(view: View, form: FormState, name: string, label: string, users: HostUser[], current: Person | null | undefined, empty: string): Html {
  const field = select(form, name, label, userChoices(users, current), current?.id, { empty });
  if (users.length < PICKER_USERS) return field;
  return html`<div class="picker">${field}${pickerSearch(view, label, empty, current)}</div>`;
}

/**
 * A people select outside a form of fields: a filter's owner (`autosubmit`, in
 * the filters bar) or a batch's new owner. `empty` comes first; the chosen one
 * stays on offer even beyond the first PICKER_USERS.
 */
export function userFilter(
  view: View,
  options: { name: string; label: string; empty: string; users: HostUser[]; current?: Person; autosubmit?: boolean },
): Html {
  const { name, label, empty, users, current } = options;
  const field = html`<label class="field${options.autosubmit ? ' inline' : ''}"><span>${label}</span><select name="${name}"${options.autosubmit ? html` class="autosubmit"` : ''}>${selectOptions(userChoices(users, current), current ? String(current.id) : '', empty)}</select></label>`;
  if (users.length < PICKER_USERS) return field;
  // The search beside the select (not under it): a filters bar and the batch form are rows of fields.
  return html`<span class="picker row">${field}${pickerSearch(view, label, empty, current)}</span>`;
}

const optionsQuery = z.object({
  q: z.string().trim().max(100).default(''),
  empty: z.string().max(50).default(''),
  current: z.union([id, z.literal('').transform(() => undefined)]).optional(),
  currentName: z.string().max(255).default(''),
});

/** The options of a picker for what was typed; the current person stays selected. */
export async function userPickerRoutes(app: FastifyInstance, deps: UiOptions): Promise<void> {
  app.get('/service/ui/users/options', { config: { permission: DEAL_PERMISSIONS.view, page: 'page' }, schema: { hide: true } }, async (request, reply) => {
    const { q, empty, current, currentName } = check(optionsQuery, request.query);
    const found = await deps.host.users.search({ search: q || undefined, limit: PICKER_USERS });
    const kept = current ? { id: current, name: currentName } : null;
    return sendHtml(reply, selectOptions(userChoices(found, kept), kept ? String(kept.id) : '', empty));
  });
}
