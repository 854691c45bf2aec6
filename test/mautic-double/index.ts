import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import qs from 'qs';

/**
 * A TEST DOUBLE, NOT MAUTIC: an HTTP server that answers the recorded shapes of
 * the Mautic REST endpoints the host adapter relies on (docs/host-mautic.md,
 * /work/shared/spec/mautic-rest.md), with state a test can change and faults it
 * can switch on: down (connections refused), slow (answers after a delay) and
 * error500 (Mautic's error body with status 500).
 *
 * Recorded shapes it keeps, traps included:
 * - `GET /api/users/self` answers the user without a wrapper key; `/api/users/{id}` wraps it in `user`;
 * - `GET /api/contacts` answers `contacts` keyed by id, `{}` when empty, and `total` as a string;
 * - `search=email:x` is a prefix match (`email:+x` is strict); the strict `where` form is equality;
 * - `POST /api/contacts/new` updates a contact with the same email (200) or creates one (201);
 * - errors are `{"errors":[{"code","message","details","type"}]}`; every answer has `Mautic-Version`.
 */

export interface DoubleRole {
  id: number;
  name: string;
  isAdmin: boolean;
}

export interface DoubleUser {
  id: number;
  username: string;
  password: string;
  firstName: string;
  lastName: string;
  email: string;
  role: DoubleRole;
}

export interface DoubleContact {
  id: number;
  email: string;
  firstname: string | null;
  lastname: string | null;
  company: string | null;
  dateModified: string;
}

export type DoubleMode = 'up' | 'down' | 'slow' | 'error500';

export interface DoubleState {
  users: Map<number, DoubleUser>;
  contacts: Map<number, DoubleContact>;
  /** Bearer tokens of users (`userId`) or of an API client (`clientId`: a stand-in user without an id). */
  tokens: Map<string, { userId?: number; clientId?: string }>;
  /** OAuth 2 client-credentials clients. */
  clients: Map<string, { secret: string; role: DoubleRole }>;
  nextContactId: number;
}

export interface MauticDouble {
  url: string;
  state: DoubleState;
  /** Requests per `METHOD path` (without the query), so tests can assert caching. */
  requests: Map<string, number>;
  setMode(mode: DoubleMode, slowMs?: number): Promise<void>;
  addContact(values: Partial<DoubleContact> & { email: string }): DoubleContact;
  close(): Promise<void>;
}

export const ADMIN_ROLE: DoubleRole = { id: 1, name: 'Administrator', isAdmin: true };
export const MAUTIC_VERSION = '5.1.1';

const errorBody = (code: number, message: string, type: string | null, details: unknown = []) => ({ errors: [{ code, message, details, type }] });

function contactJson(contact: DoubleContact) {
  const core = { email: contact.email, firstname: contact.firstname, lastname: contact.lastname, company: contact.company };
  return {
    id: contact.id,
    isPublished: true,
    dateAdded: contact.dateModified,
    dateModified: contact.dateModified,
    owner: null,
    points: 0,
    lastActive: null,
    dateIdentified: contact.dateModified,
    fields: {
      core: Object.fromEntries(Object.entries(core).map(([alias, value]) => [alias, { alias, value }])),
      social: [],
      personal: [],
      professional: [],
      all: { id: contact.id, ...core },
    },
    tags: [],
    doNotContact: [],
    stage: null,
  };
}

function userJson(user: DoubleUser) {
  return {
    id: user.id,
    username: user.username,
    firstName: user.firstName,
    lastName: user.lastName,
    email: user.email,
    position: null,
    timezone: null,
    locale: null,
    lastLogin: null,
    lastActive: null,
    signature: null,
    role: { id: user.role.id, name: user.role.name, description: null, isAdmin: user.role.isAdmin },
  };
}

/** Mautic's contact search commands, as far as the adapter uses them. */
function matchesSearch(contact: DoubleContact, search: string): boolean {
  const lower = (value: string | null) => (value ?? '').toLowerCase();
  const [command, ...rest] = search.split(':');
  const value = rest.join(':');
  if (rest.length > 0 && command === 'email') {
    // `email:+x` is strict; `email:x` is LIKE 'x%' (the prefix trap).
    return value.startsWith('+') ? lower(contact.email) === value.slice(1).toLowerCase() : lower(contact.email).startsWith(value.toLowerCase());
  }
  if (rest.length > 0 && command === 'ids') return value.split(',').map(Number).includes(contact.id);
  if (rest.length > 0 && command === 'name') {
    const needle = value.toLowerCase();
    return lower(contact.firstname).startsWith(needle) || lower(contact.lastname).startsWith(needle);
  }
  // Free text: contains, over the name and email fields.
  const needle = search.toLowerCase();
  return [contact.email, contact.firstname, contact.lastname, `${contact.firstname ?? ''} ${contact.lastname ?? ''}`, contact.company].some((field) =>
    lower(field).includes(needle),
  );
}

export async function startMauticDouble(options: { users?: DoubleUser[]; contacts?: Omit<DoubleContact, 'dateModified'>[] } = {}): Promise<MauticDouble> {
  const state: DoubleState = {
    users: new Map((options.users ?? []).map((user) => [user.id, user])),
    contacts: new Map(),
    tokens: new Map(),
    clients: new Map(),
    nextContactId: 1,
  };
  const requests = new Map<string, number>();
  let mode: DoubleMode = 'up';
  let slowMs = 0;
  let port = 0;
  const sockets = new Set<Socket>();

  const addContact = (values: Partial<DoubleContact> & { email: string }): DoubleContact => {
    const id = values.id ?? state.nextContactId;
    state.nextContactId = Math.max(state.nextContactId, id + 1);
    const contact: DoubleContact = {
      id,
      email: values.email,
      firstname: values.firstname ?? null,
      lastname: values.lastname ?? null,
      company: values.company ?? null,
      dateModified: new Date().toISOString(),
    };
    state.contacts.set(id, contact);
    return contact;
  };
  for (const contact of options.contacts ?? []) addContact(contact);

  /** The caller behind the Authorization header: a user, an API client's stand-in, or why not. */
  function caller(header: string | undefined): { user?: DoubleUser; client?: string } | { error: [number, object] } {
    if (!header) return { error: [401, errorBody(401, 'API authorization denied.', 'access_denied')] };
    if (/^basic /i.test(header)) {
      const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      const user = [...state.users.values()].find((u) => u.username === decoded.slice(0, colon) && u.password === decoded.slice(colon + 1));
      return user ? { user } : { error: [401, errorBody(401, 'Authorization denied, invalid credentials.', 'access_denied')] };
    }
    const grant = state.tokens.get(header.replace(/^bearer /i, ''));
    if (!grant) return { error: [401, { errors: [{ message: 'The access token provided is invalid.', code: 401, type: 'invalid_grant' }] }] };
    return grant.userId ? { user: state.users.get(grant.userId) } : { client: grant.clientId };
  }

  function route(method: string, path: string, query: Record<string, unknown>, body: Record<string, unknown>, auth: string | undefined): [number, unknown] {
    if (method === 'POST' && path === '/oauth/v2/token') {
      const client = state.clients.get(String(body.client_id ?? ''));
      if (body.grant_type !== 'client_credentials' || !client || client.secret !== body.client_secret) {
        return [400, { errors: [{ message: 'The client credentials are invalid', code: 400, type: 'invalid_client' }] }];
      }
      const token = `svc-${Math.random().toString(36).slice(2)}`;
      state.tokens.set(token, { clientId: String(body.client_id) });
      return [200, { access_token: token, expires_in: 3600, token_type: 'bearer', scope: null, refresh_token: null }];
    }
    const who = caller(auth);
    if ('error' in who) return who.error;

    if (method === 'GET' && path === '/api/users/self') {
      if (who.user) return [200, userJson(who.user)];
      const role = state.clients.get(who.client!)!.role;
      // A client-credentials caller is a stand-in user without an id.
      return [200, { username: who.client, firstName: 'API', lastName: 'Client', email: null, role: { id: role.id, name: role.name, isAdmin: role.isAdmin } }];
    }
    const userMatch = /^\/api\/users\/(\d+)$/.exec(path);
    if (method === 'GET' && userMatch) {
      const user = state.users.get(Number(userMatch[1]));
      return user ? [200, { user: userJson(user) }] : [404, errorBody(404, 'Item was not found.', null)];
    }
    if (method === 'GET' && path === '/api/users') {
      const search = String(query.search ?? '').toLowerCase();
      const found = [...state.users.values()].filter((u) => !search || [u.username, u.email, `${u.firstName} ${u.lastName}`].some((f) => f.toLowerCase().includes(search)));
      const start = Number(query.start ?? 0);
      const limit = Number(query.limit ?? 30);
      return [200, { total: found.length, users: found.slice(start, start + limit).map(userJson) }];
    }
    if (method === 'GET' && path === '/api/contacts') {
      let found = [...state.contacts.values()];
      const where = (query.where ?? []) as { col?: string; expr?: string; val?: string }[];
      for (const clause of Object.values(where)) {
        if (clause.col === 'email' && clause.expr === 'eq') found = found.filter((c) => c.email.toLowerCase() === String(clause.val).toLowerCase());
      }
      if (query.search) found = found.filter((c) => matchesSearch(c, String(query.search)));
      found.sort((a, b) => a.id - b.id);
      const start = Number(query.start ?? 0);
      const page = found.slice(start, start + Number(query.limit ?? 30));
      // Keyed by id; an empty result is {} (never []); total is a string.
      return [200, { total: String(found.length), contacts: Object.fromEntries(page.map((c) => [String(c.id), contactJson(c)])) }];
    }
    const contactMatch = /^\/api\/contacts\/(\d+)$/.exec(path);
    if (method === 'GET' && contactMatch) {
      const contact = state.contacts.get(Number(contactMatch[1]));
      return contact ? [200, { contact: contactJson(contact) }] : [404, errorBody(404, 'Item was not found.', null)];
    }
    if (method === 'POST' && path === '/api/contacts/new') {
      const email = typeof body.email === 'string' ? body.email.trim() : '';
      if (!email) return [422, errorBody(422, 'email: A valid email is required.', 'validation_failed', { email: ['A valid email is required.'] })];
      const existing = [...state.contacts.values()].find((c) => c.email.toLowerCase() === email.toLowerCase());
      const fields = { firstname: body.firstname, lastname: body.lastname, company: body.company } as Record<string, unknown>;
      if (existing) {
        // Blank values do not overwrite (overwriteWithBlank is not set).
        for (const [key, value] of Object.entries(fields)) if (typeof value === 'string' && value !== '') (existing as unknown as Record<string, unknown>)[key] = value;
        existing.dateModified = new Date().toISOString();
        return [200, { contact: contactJson(existing) }];
      }
      const created = addContact({ email, ...(Object.fromEntries(Object.entries(fields).filter(([, v]) => typeof v === 'string' && v !== '')) as Partial<DoubleContact>) });
      return [201, { contact: contactJson(created) }];
    }
    return [404, errorBody(404, 'Requested URL not found: /'.concat(path), 'not_found')];
  }

  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const url = new URL(request.url ?? '/', 'http://double');
      const key = `${request.method} ${url.pathname}`;
      requests.set(key, (requests.get(key) ?? 0) + 1);
      const raw = Buffer.concat(chunks).toString('utf8');
      const json = (request.headers['content-type'] ?? '').includes('json');
      let body: Record<string, unknown> = {};
      try {
        body = raw ? (json ? JSON.parse(raw) : qs.parse(raw)) : {};
      } catch {
        body = {};
      }
      const answer = () => {
        const [status, payload] =
          mode === 'error500'
            ? [500, errorBody(500, 'Looks like I encountered an error (error #500). If I do it again, please report me to the system administrator!', null)]
            : route(request.method ?? 'GET', url.pathname, qs.parse(url.search.slice(1)), body, request.headers.authorization);
        response.writeHead(status, { 'content-type': 'application/json', 'mautic-version': MAUTIC_VERSION });
        response.end(JSON.stringify(payload));
      };
      if (mode === 'slow') setTimeout(answer, slowMs);
      else answer();
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  const listen = () => new Promise<void>((done) => server.listen(port, '127.0.0.1', () => done()));
  await listen();
  port = (server.address() as AddressInfo).port;

  const stop = () =>
    new Promise<void>((done) => {
      server.close(() => done());
      for (const socket of sockets) socket.destroy();
    });

  return {
    url: `http://127.0.0.1:${port}`,
    state,
    requests,
    addContact,
    async setMode(next, delayMs = 0) {
      // Down is a closed port (connection refused), as for a stopped server; back up on the same port.
      if (next === 'down' && mode !== 'down') await stop();
      if (next !== 'down' && mode === 'down') await listen();
      mode = next;
      slowMs = delayMs;
    },
    async close() {
      if (mode !== 'down') await stop();
    },
  };
}

/* ---- The webhooks Mautic sends about contacts ---- */

function stamp(contact: DoubleContact) {
  return { ...contactJson(contact), timestamp: new Date().toISOString() };
}

/** `mautic.lead_post_save_update` of one contact. */
export const contactUpdated = (contact: DoubleContact) => ({ 'mautic.lead_post_save_update': [{ contact: stamp(contact), timestamp: new Date().toISOString() }] });

/** `mautic.lead_post_delete`: the deleted id beside the contact as it was. */
export const contactDeleted = (contact: DoubleContact) => ({
  'mautic.lead_post_delete': [{ id: contact.id, contact: { ...stamp(contact), id: null }, timestamp: new Date().toISOString() }],
});

/**
 * A merge has no webhook of its own: Mautic saves the winner (an update, sent
 * only if the merge changed it) and then deletes the loser.
 */
export const contactsMerged = (winner: DoubleContact, loser: DoubleContact) => [contactUpdated(winner), contactDeleted(loser)];

/** The body and headers Mautic would POST: `Webhook-Signature` = base64 HMAC-SHA256 of the exact body. */
export function signedWebhook(secret: string, payload: object): { body: string; headers: Record<string, string> } {
  const body = JSON.stringify(payload);
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'webhook-signature': createHmac('sha256', secret).update(body).digest('base64'),
      'x-origin-base-url': 'http://mautic.test',
    },
  };
}

/** A Mautic user for the double's state. */
export function doubleUser(id: number, username: string, password: string, role: DoubleRole, name = username): DoubleUser {
  const [firstName, ...last] = name.split(' ');
  return { id, username, password, firstName: firstName!, lastName: last.join(' '), email: `${username}@mautic.test`, role };
}
