import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { createCredential, getCredentials, removeCredential } from '../api-credentials.service.js';
import { credentialBody } from '../routes/api-credentials.routes.js';
import { roleBody } from '../routes/roles.routes.js';
import { changeOwnPasswordLimited, editUserBody, ownPasswordBody, password, userBody } from '../routes/users.routes.js';
import { createRole, editRole, getRole, getRoles, removeRole } from '../roles.service.js';
import { createUser, editUser, getUser, getUsers, resetPassword } from '../users.service.js';
import { id, searchQuery } from '../../../http/schemas.js';
import { forgetLogins } from '../../../routes/index.js';
import { check, submitForm, type FormState } from '../../../ui/forms.js';
import type { UiOptions } from '../../../ui/index.js';
import { layout, sendHtml, viewOf, type View } from '../../../ui/page.js';
import { accountPage, credentialsPage, rolePage, rolesPage, userPage, usersPage, type UserForms } from './settings-users.view.js';
import { doneNotice, settingsPage } from '../../../ui/settings.routes.js';

/**
 * The built-in host's users, roles and API credentials, and your own password,
 * as pages: the services and body schemas of /host/users, /host/roles and
 * /host/api-credentials, behind the same host:admin permission. Registered only
 * when the host manages its users here.
 */

const params = z.object({ id });
const DONE: Record<string, string> = {
  created: 'User created.',
  saved: 'Saved.',
  password: 'Password reset; they will be asked to choose their own.',
  deactivated: 'User deactivated; their sessions have ended.',
  activated: 'User reactivated.',
  'role-created': 'Role created.',
  'role-saved': 'Role saved.',
  'role-deleted': 'Role deleted.',
  'credential-deleted': 'API credential deleted; its tokens no longer work.',
};
const ALL_USERS = { page: 1, limit: 200 };

/** Passwords are never written back into a page. */
const withoutPasswords = (form: FormState): FormState => {
  const { password: _p, current_password: _c, ...values } = form.values;
  return { ...form, values };
};

/** Checkboxes: a hidden "none" value rides along, and the admin box sends false then true. */
function roleFormBody(body: unknown): Record<string, unknown> {
  const value = { ...((body ?? {}) as Record<string, unknown>) };
  const permissions = value.permissions === undefined ? [] : Array.isArray(value.permissions) ? value.permissions : [value.permissions];
  value.permissions = permissions.filter((p) => p !== '');
  value.isAdmin = [value.isAdmin].flat().includes('true') ? 'true' : 'false';
  return value;
}

export async function settingsUserRoutes(app: FastifyInstance, deps: UiOptions): Promise<void> {
  const { db } = deps;
  const base = app.prefix;
  const admin = { config: { permission: 'host:admin' as const, page: 'page' as const }, schema: { hide: true } };
  const view = (request: FastifyRequest): View => viewOf(request, base);
  const forget = () => forgetLogins(deps);
  const redirect = (reply: FastifyReply, to: string, done: string) => reply.redirect(`${base}/service/settings${to}?done=${done}`, 303);
  const users = async () => (await getUsers(db, ALL_USERS)).users;

  /* ---- users ---- */

  async function showUsers(request: FastifyRequest, reply: FastifyReply, form?: FormState, status = 200) {
    const v = view(request);
    const { search } = check(searchQuery.pick({ search: true }), request.query ?? {});
    const found = await getUsers(db, { ...ALL_USERS, search });
    const body = usersPage(v, found.users, await getRoles(db), form && withoutPasswords(form), { search: search ?? '', total: found.total });
    return sendHtml(reply, settingsPage(v, 'Users', '/service/settings/users', body, form ? undefined : doneNotice(request.query, DONE)), status);
  }

  async function showUser(request: FastifyRequest, reply: FastifyReply, userId: number, forms?: UserForms, status = 200) {
    const v = view(request);
    const user = await getUser(db, userId);
    const clean = forms && { ...forms, password: forms.password && withoutPasswords(forms.password), details: forms.details && withoutPasswords(forms.details) };
    const body = userPage(v, user, await getRoles(db), clean);
    return sendHtml(reply, settingsPage(v, user.name, '/service/settings/users', body, forms ? undefined : doneNotice(request.query, DONE)), status);
  }

  app.get('/service/settings/users', admin, async (request, reply) => showUsers(request, reply));

  app.post('/service/settings/users/new', admin, async (request, reply) => {
    // Someone else chose this password: the new user is asked for their own.
    const done = await submitForm(userBody, request.body, (data) => createUser(db, data, { mustChangePassword: true }));
    if (!done.ok) return showUsers(request, reply, done.form, done.status);
    return redirect(reply, `/users/${done.result.id}`, 'created');
  });

  app.get('/service/settings/users/:id', admin, async (request, reply) => showUser(request, reply, check(params, request.params).id));

  app.post('/service/settings/users/:id/edit', admin, async (request, reply) => {
    const { id: userId } = check(params, request.params);
    const schema = editUserBody.pick({ name: true, username: true, email: true, role: true });
    const done = await submitForm(schema, request.body, (data) => editUser(db, userId, data));
    if (!done.ok) return showUser(request, reply, userId, { details: done.form }, done.status);
    forget();
    return redirect(reply, `/users/${userId}`, 'saved');
  });

  app.post('/service/settings/users/:id/password', admin, async (request, reply) => {
    const { id: userId } = check(params, request.params);
    const done = await submitForm(z.object({ password }), request.body, (data) => resetPassword(db, userId, data.password));
    if (!done.ok) return showUser(request, reply, userId, { password: done.form }, done.status);
    forget();
    return redirect(reply, `/users/${userId}`, 'password');
  });

  for (const [action, isActive] of [['deactivate', false], ['activate', true]] as const) {
    app.post(`/service/settings/users/:id/${action}`, admin, async (request, reply) => {
      const { id: userId } = check(params, request.params);
      const done = await submitForm(z.object({}), request.body, () => editUser(db, userId, { isActive }));
      if (!done.ok) return showUser(request, reply, userId, { status: done.form }, done.status);
      forget();
      return redirect(reply, `/users/${userId}`, `${action}d`);
    });
  }

  /* ---- roles ---- */

  async function showRoles(request: FastifyRequest, reply: FastifyReply, form?: FormState, status = 200) {
    const v = view(request);
    const body = rolesPage(v, await getRoles(db), form);
    return sendHtml(reply, settingsPage(v, 'Roles', '/service/settings/roles', body, form ? undefined : doneNotice(request.query, DONE)), status);
  }

  async function showRole(request: FastifyRequest, reply: FastifyReply, roleId: number, form?: FormState, remove?: FormState, status = 200) {
    const v = view(request);
    const role = await getRole(db, roleId);
    const notice = form || remove ? undefined : doneNotice(request.query, DONE);
    return sendHtml(reply, settingsPage(v, role.name, '/service/settings/roles', rolePage(v, role, form, remove), notice), status);
  }

  app.get('/service/settings/roles', admin, async (request, reply) => showRoles(request, reply));

  app.post('/service/settings/roles/new', admin, async (request, reply) => {
    const body = roleFormBody(request.body);
    const done = await submitForm(roleBody, body, (data) => createRole(db, data));
    if (!done.ok) return showRoles(request, reply, done.form, done.status);
    return redirect(reply, `/roles/${done.result.id}`, 'role-created');
  });

  app.get('/service/settings/roles/:id', admin, async (request, reply) => showRole(request, reply, check(params, request.params).id));

  app.post('/service/settings/roles/:id/edit', admin, async (request, reply) => {
    const { id: roleId } = check(params, request.params);
    const done = await submitForm(roleBody, roleFormBody(request.body), (data) => editRole(db, roleId, data));
    if (!done.ok) return showRole(request, reply, roleId, done.form, undefined, done.status);
    forget();
    return redirect(reply, `/roles/${roleId}`, 'role-saved');
  });

  app.post('/service/settings/roles/:id/delete', admin, async (request, reply) => {
    const { id: roleId } = check(params, request.params);
    const done = await submitForm(z.object({}), request.body, () => removeRole(db, roleId));
    if (!done.ok) return showRole(request, reply, roleId, undefined, done.form, done.status);
    forget();
    return redirect(reply, '/roles', 'role-deleted');
  });

  /* ---- API credentials ---- */

  const tokenUrl = `${deps.baseUrl}/oauth/v2/token`;
  async function showCredentials(request: FastifyRequest, reply: FastifyReply, form?: FormState, created?: Parameters<typeof credentialsPage>[4], status = 200) {
    const v = view(request);
    const body = credentialsPage(v, await getCredentials(db), await users(), form, created, tokenUrl);
    const notice = form || created ? undefined : doneNotice(request.query, DONE);
    return sendHtml(reply, settingsPage(v, 'API credentials', '/service/settings/api-credentials', body, notice), status);
  }

  app.get('/service/settings/api-credentials', admin, async (request, reply) => showCredentials(request, reply));

  // The secret is in this answer only (no-store, and settings.js replaces the URL so a reload asks for the list, not this POST again).
  app.post('/service/settings/api-credentials/new', admin, async (request, reply) => {
    const done = await submitForm(credentialBody, request.body, (data) => createCredential(db, data));
    if (!done.ok) return showCredentials(request, reply, done.form, undefined, done.status);
    return showCredentials(request, reply, undefined, done.result);
  });

  app.post('/service/settings/api-credentials/:id/delete', admin, async (request, reply) => {
    const { id: credentialId } = check(params, request.params);
    await removeCredential(db, credentialId);
    forget();
    return redirect(reply, '/api-credentials', 'credential-deleted');
  });

  /* ---- your account (any logged-in user) ---- */

  const own = { config: { authenticated: true, page: 'page' as const }, schema: { hide: true } };
  const showAccount = (request: FastifyRequest, reply: FastifyReply, form?: FormState, saved = false, status = 200) => {
    const v = view(request);
    return sendHtml(reply, layout(v, 'Your account', accountPage(v, form && withoutPasswords(form), saved), '/service/account'), status);
  };

  app.get('/service/account', own, async (request, reply) => showAccount(request, reply, undefined, doneNotice(request.query, { password: 'yes' }) !== undefined));

  app.post('/service/account/password', own, async (request, reply) => {
    const done = await submitForm(ownPasswordBody, request.body, (data) => changeOwnPasswordLimited(app, request, db, data));
    if (!done.ok) return showAccount(request, reply, done.form, false, done.status);
    forget();
    return reply.redirect(`${base}/service/account?done=password`, 303);
  });
}
