import type { CredentialJson } from '../api-credentials.service.js';
import type { RoleJson } from '../roles.service.js';
import type { UserJson } from '../users.service.js';
import { PERMISSIONS } from '../../permissions.js';
import { emptyForm, fieldErrors, formMessage, input, select, type FormState } from '../../../ui/forms.js';
import { attr, html, type Html } from '../../../ui/html.js';
import { csrfField, dateTime, type View } from '../../../ui/page.js';
import { PERMISSION_LABELS } from '../../../ui/settings.js';

/** Users, roles, API credentials and your own password: the built-in host's management, as pages. */

const at = (view: View, rest: string) => `${view.base}/service/settings${rest}`;
const roleChoices = (roles: RoleJson[]) => roles.map((r) => ({ value: r.id, label: r.isAdmin ? `${r.name} (administrator)` : r.name }));

export function usersPage(view: View, users: UserJson[], roles: RoleJson[], form: FormState = emptyForm(), list = { search: '', total: users.length }): Html {
  return html`<h1>Users</h1>
<section class="panel">
  <form method="get" action="${at(view, '/users')}" class="row table-tools" role="search">
    <label class="field"><span>Find by name, user name or email</span><input name="search" type="search" value="${list.search}"></label>
    <button>Search</button>${list.search ? html`<a href="${at(view, '/users')}">Show all</a>` : ''}
    <span class="muted">${list.total > users.length ? `Showing ${users.length} of ${list.total}: search to find the others.` : `${list.total} user${list.total === 1 ? '' : 's'}`}</span>
  </form>
  <table class="deals settings-table"><thead><tr><th>Name</th><th>User name</th><th>Email</th><th>Role</th><th>Status</th><th></th></tr></thead><tbody>
  ${users.map(
    (u) => html`<tr class="${u.isActive ? '' : 'inactive'}"><td class="title"><a href="${at(view, `/users/${u.id}`)}">${u.name}</a></td><td>${u.username}</td>
      <td>${u.email ?? ''}</td><td>${u.role.name}</td><td>${u.isActive ? 'Active' : html`<span class="muted">Deactivated</span>`}</td>
      <td><a class="button" href="${at(view, `/users/${u.id}`)}">Edit</a></td></tr>`,
  )}
  </tbody></table>
</section>
<section class="panel" id="new-user">
  <h2>New user</h2>
  <p class="muted">They log in with this user name and password; tell them the password another way than this page. They are asked to choose their own when they first log in.</p>
  <form method="post" action="${at(view, '/users/new')}" class="stack">
    ${csrfField(view)}${formMessage(form)}
    <div class="fields">
      ${input(form, 'name', 'Full name', { required: true })}
      ${input(form, 'username', 'User name', { required: true })}
      ${input(form, 'email', 'Email', { type: 'email' })}
      ${select(form, 'role', 'Role', roleChoices(roles), undefined, { empty: 'Choose a role' })}
      ${input(form, 'password', 'Password (at least 12 characters)', { type: 'password', required: true })}
    </div>
    <div class="row"><button class="primary">Create user</button></div>
  </form>
</section>`;
}

export interface UserForms {
  details?: FormState;
  password?: FormState;
  status?: FormState;
}

export function userPage(view: View, user: UserJson, roles: RoleJson[], forms: UserForms = {}): Html {
  const details = forms.details ?? emptyForm();
  const password = forms.password ?? emptyForm();
  const status = forms.status ?? emptyForm();
  const self = user.id === view.actor.id;
  return html`<p><a href="${at(view, '/users')}">← All users</a></p>
<h1>${user.name}${user.isActive ? '' : html` <span class="badge lost">Deactivated</span>`}</h1>
<div class="settings-grid">
<section class="panel" id="details"><h2>Details and role</h2>
  <form method="post" action="${at(view, `/users/${user.id}/edit`)}" class="stack">
    ${csrfField(view)}${formMessage(details)}
    <div class="fields">
      ${input(details, 'name', 'Full name', { value: user.name, required: true })}
      ${input(details, 'username', 'User name', { value: user.username, required: true })}
      ${input(details, 'email', 'Email', { type: 'email', value: user.email })}
      ${select(details, 'role', 'Role', roleChoices(roles), user.role.id)}
    </div>
    <div class="row"><button class="primary">Save</button></div>
  </form>
</section>
<div class="stack">
<section class="panel" id="password"><h2>Reset password</h2>
  <p class="muted">${self
    ? 'Sets a new password for you; you will be asked to choose your own afterwards.'
    : 'Sets a new password: tell it to them another way than this page. They will be asked to choose their own when they next log in.'}</p>
  <form method="post" action="${at(view, `/users/${user.id}/password`)}" class="row">
    ${csrfField(view)}${formMessage(password)}
    ${input(password, 'password', 'New password (at least 12 characters)', { type: 'password', required: true })}
    <button>Reset password</button>
  </form>
</section>
<section class="panel" id="status"><h2>${user.isActive ? 'Deactivate' : 'Reactivate'}</h2>
  ${formMessage(status)}
  ${user.isActive
    ? html`<p class="muted">A deactivated user can no longer log in, their open sessions end at once, and their API credentials stop working. Their deals, notes and tasks keep their name.</p>
      <form method="post" action="${at(view, `/users/${user.id}/deactivate`)}">${csrfField(view)}
        <button class="danger" data-confirm="Click again to deactivate">Deactivate ${user.name}</button></form>`
    : html`<p class="muted">They can log in again with their password.</p>
      <form method="post" action="${at(view, `/users/${user.id}/activate`)}">${csrfField(view)}<button>Reactivate</button></form>`}
</section>
</div>
</div>`;
}

function permissionBoxes(form: FormState, current: string[], typed: boolean): Html {
  const chosen = typed ? new Set(Object.entries(form.values).filter(([k]) => k.startsWith('permissions[')).map(([, v]) => v)) : new Set(current);
  return html`<fieldset class="permissions"><legend>Permissions</legend>
    <input type="hidden" name="permissions[]" value="">
    ${PERMISSIONS.map(
      (p) => html`<label class="check"><input type="checkbox" name="permissions[]" value="${p}"${attr('checked', chosen.has(p))}> ${PERMISSION_LABELS[p]} <code>${p}</code></label>`,
    )}${Object.keys(form.errors).filter((name) => name.startsWith('permissions')).map((name) => fieldErrors(form, name))}</fieldset>`;
}

function roleForm(view: View, action: string, form: FormState, role: RoleJson | undefined, button: string): Html {
  const typed = Object.keys(form.values).length > 0;
  const isAdmin = typed ? form.values.isAdmin === 'true' : (role?.isAdmin ?? false);
  return html`<form method="post" action="${action}" class="stack">
    ${csrfField(view)}${formMessage(form)}
    <div class="row">${input(form, 'name', 'Role name', { value: role?.name, required: true })}</div>
    <input type="hidden" name="isAdmin" value="false">
    <label class="check"><input type="checkbox" name="isAdmin" value="true"${attr('checked', isAdmin)}><span><strong>Administrator</strong>: may do everything, whatever is ticked below</span></label>
    ${fieldErrors(form, 'isAdmin')}
    ${permissionBoxes(form, role?.permissions ?? [], typed)}
    <div class="row"><button class="primary">${button}</button></div>
  </form>`;
}

export function rolesPage(view: View, roles: RoleJson[], form: FormState = emptyForm()): Html {
  return html`<h1>Roles</h1>
<section class="panel">
  <table class="deals settings-table"><thead><tr><th>Role</th><th>May</th><th></th></tr></thead><tbody>
  ${roles.map(
    (r) => html`<tr><td class="title"><a href="${at(view, `/roles/${r.id}`)}">${r.name}</a></td>
      <td class="muted">${r.isAdmin ? 'Everything (administrator)' : r.permissions.length === 0 ? 'Nothing yet' : r.permissions.map((p) => PERMISSION_LABELS[p as keyof typeof PERMISSION_LABELS] ?? p).join(', ')}</td>
      <td><a class="button" href="${at(view, `/roles/${r.id}`)}">Edit</a></td></tr>`,
  )}
  </tbody></table>
</section>
<section class="panel" id="new-role"><h2>New role</h2>${roleForm(view, at(view, '/roles/new'), form, undefined, 'Create role')}</section>`;
}

export function rolePage(view: View, role: RoleJson, form: FormState = emptyForm(), remove: FormState = emptyForm()): Html {
  return html`<p><a href="${at(view, '/roles')}">← All roles</a></p>
<h1>${role.name}</h1>
<section class="panel" id="role">${roleForm(view, at(view, `/roles/${role.id}/edit`), form, role, 'Save role')}</section>
<section class="panel" id="delete"><h2>Delete role</h2>
  <p class="muted">A role can be deleted only when no user holds it and no pipeline is limited to it.</p>
  ${formMessage(remove)}
  <form method="post" action="${at(view, `/roles/${role.id}/delete`)}">${csrfField(view)}<button class="danger" data-confirm="Click again to delete">Delete role</button></form>
</section>`;
}

export function credentialsPage(
  view: View,
  credentials: CredentialJson[],
  users: UserJson[],
  form: FormState = emptyForm(),
  created?: CredentialJson & { client_secret: string },
  tokenUrl = '',
): Html {
  const active = users.filter((u) => u.isActive).map((u) => ({ value: u.id, label: `${u.name} (${u.username})` }));
  return html`<h1>API credentials</h1>
${created
  ? html`<section class="panel secret" id="secret" data-replace-url="${at(view, '/api-credentials')}">
  <h2>Credential “${created.name}” created</h2>
  <p><strong>Copy the secret now: it is shown only this once.</strong> The service keeps only a hash of it; if it is lost, delete the credential and create another.</p>
  <dl class="pairs">
    <dt>Client ID</dt><dd><code id="client-id">${created.client_id}</code> <button type="button" data-copy="client-id">Copy</button></dd>
    <dt>Client secret</dt><dd><code id="client-secret">${created.client_secret}</code> <button type="button" data-copy="client-secret">Copy</button></dd>
    <dt>Token URL</dt><dd><code>${tokenUrl}</code></dd>
  </dl>
  <p class="muted">A program asks for a token with the client credentials grant (POST the client ID and secret to the token URL, grant_type=client_credentials) and sends it as <code>Authorization: Bearer …</code>; it acts as ${created.user.name}.</p>
</section>`
  : ''}
<section class="panel">
  ${credentials.length === 0
    ? html`<p class="muted">No API credentials yet.</p>`
    : html`<table class="deals settings-table"><thead><tr><th>Name</th><th>Client ID</th><th>Acts as</th><th>Created</th><th>Last used</th><th></th></tr></thead><tbody>
    ${credentials.map(
      (c) => html`<tr><td class="title">${c.name}</td><td><code>${c.client_id}</code></td><td>${c.user.name}</td><td>${dateTime(c.createdAt)}</td>
        <td>${c.lastUsedAt ? dateTime(c.lastUsedAt) : html`<span class="muted">never</span>`}</td>
        <td><form method="post" action="${at(view, `/api-credentials/${c.id}/delete`)}">${csrfField(view)}<button class="danger" data-confirm="Click again to delete">Delete</button></form></td></tr>`,
    )}</tbody></table>`}
</section>
<section class="panel" id="new-credential"><h2>New API credential</h2>
  <p class="muted">An OAuth 2.0 client for another program. Its tokens act as the user you choose, with that user’s role.</p>
  <form method="post" action="${at(view, '/api-credentials/new')}" class="row">
    ${csrfField(view)}${formMessage(form)}
    ${input(form, 'name', 'Name (what uses it)', { required: true })}
    ${select(form, 'user', 'Acts as', active, undefined, { empty: 'Choose a user' })}
    <button class="primary">Create credential</button>
  </form>
</section>`;
}

export function accountPage(view: View, form: FormState = emptyForm(), saved = false): Html {
  return html`<section class="panel narrow-wide">
  <h1>Your account</h1>
  <p>Logged in as <strong>${view.actor.name}</strong> (${view.actor.username}).</p>
  <h2>Change your password</h2>
  ${saved ? html`<p class="notice" role="status">Your password is changed.</p>` : ''}
  ${view.mustChangePassword ? html`<p class="muted">You are using a password you were given. Choose one only you know.</p>` : ''}
  <form method="post" action="${view.base}/service/account/password" class="stack">
    ${csrfField(view)}${formMessage(form)}
    ${input(form, 'current_password', 'Current password', { type: 'password', required: true })}
    ${input(form, 'password', 'New password (at least 12 characters)', { type: 'password', required: true })}
    <div class="row"><button class="primary">Change password</button></div>
  </form>
</section>`;
}
