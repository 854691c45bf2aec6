import { Ajv, type ValidateFunction } from 'ajv';
import formats from 'ajv-formats';
import qs from 'qs';
import { beforeAll, describe, expect, it } from 'vitest';
import type { InjectOptions } from 'fastify';
import { setupApp, type TestContext } from './helpers/app.js';

/**
 * Conformance: every operation of /service/openapi.json gets a valid request
 * built from its own schemas, then boundary values of each input (minimum and
 * maximum and one past them, lengths, patterns, formats, every enum value and
 * one outside, each required field missing), in JSON and as a form. Every answer
 * must be a status the operation documents, with a body that matches the
 * documented schema, and no request valid by the document may be refused with
 * 422. Deterministic: the values come from the schemas, not from chance.
 */

type Schema = Record<string, any>;
interface Operation {
  method: string;
  path: string;
  op: Schema;
}
interface Variant {
  label: string;
  query: Record<string, unknown>;
  body?: unknown;
  form?: boolean;
  /** The input this variant changed, as the error details would name it (deal[title]). */
  field?: string;
  /** It changed an id that names another thing (which ids exist, the document cannot say). */
  reference?: boolean;
}

let t: TestContext;
let doc: Schema;
const ajv = new Ajv({ strict: false, allErrors: false, validateFormats: true });
// ajv-formats is CommonJS: its function is the default export's default.
(formats as unknown as { default: (ajv: Ajv) => Ajv }).default(ajv);

/** OpenAPI 3.0's `nullable` as JSON Schema: null or the rest; a reference to one of the document's components, that component. */
function jsonSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(jsonSchema);
  if (!schema || typeof schema !== 'object') return schema;
  const ref = (schema as Schema).$ref;
  if (typeof ref === 'string') return jsonSchema((doc.components as Schema).schemas[ref.replace('#/components/schemas/', '')]);
  const { nullable, example: _example, ...rest } = schema as Schema;
  const converted = Object.fromEntries(Object.entries(rest).map(([key, value]) => [key, key === 'properties' ? Object.fromEntries(Object.entries(value as Schema).map(([name, sub]) => [name, jsonSchema(sub)])) : jsonSchema(value)]));
  return nullable ? { anyOf: [{ type: 'null' }, converted] } : converted;
}

const validators = new WeakMap<object, ValidateFunction>();
function valid(schema: Schema, value: unknown): boolean {
  let check = validators.get(schema);
  if (!check) validators.set(schema, (check = ajv.compile(jsonSchema(schema) as object)));
  return check(value) as boolean;
}

/** Real things for the references a request names, so a valid request can succeed; made fresh per operation. */
type Fixtures = Record<string, number | string>;
let counter = 0;
async function fixtures(base?: Fixtures, only?: string): Promise<Fixtures> {
  const n = ++counter;
  const post = async (url: string, payload: unknown) => {
    const res = await t.call({ method: 'POST', url, payload: payload as Record<string, unknown> });
    if (res.statusCode !== 200) throw new Error(`fixture ${url}: ${res.statusCode} ${res.body}`);
    return res.json();
  };
  const f: Fixtures = { ...base, delivery: 2_147_483_647 };
  // A fresh contact, note or task comes with a fresh deal of its own (earlier operations may have deleted the shared one).
  const wanted = (kind: string) => !base || only === kind || (kind === 'deal' && ['contact', 'note', 'task'].includes(only!));
  if (wanted('pipeline')) {
    const pipeline = (await post('/service/pipelines/new', { pipeline: { name: `Conformance ${n}` }, stages: [{ name: 'Lead' }, { name: 'Won', type: 'won', probability: 100 }, { name: 'Lost', type: 'lost', probability: 0 }] })).pipeline;
    const [first, won, lost] = pipeline.stages as { id: number }[];
    Object.assign(f, { pipeline: pipeline.id, stage: first!.id, wonStage: won!.id, lostStage: lost!.id });
  }
  if (wanted('stage')) f.stage = (await post(`/service/pipelines/${f.pipeline}/stages/new`, { stage: { name: `Stage ${n}` } })).stage.id;
  if (wanted('role')) f.role = (await post('/host/roles/new', { name: `conformance-role-${n}`, permissions: ['service:deals:viewown'] })).role.id;
  if (wanted('user')) f.user = (await post('/host/users/new', { username: `conformance-${n}`, password: 'a-long-password-1', name: `Conformance ${n}`, role: f.role })).user.id;
  if (wanted('contact')) f.contact = (await post('/host/contacts/new', { email: `conformance-${n}@example.com` })).contact.id;
  // Boundary values name id 1 (a batch deletes the deals it names): deal 1 is a decoy, never a fixture.
  if (!base) await post('/service/deals/new', { deal: { title: 'Decoy: id 1' } });
  if (wanted('deal')) f.deal = (await post('/service/deals/new', { deal: { title: `Conformance ${n}`, pipeline: f.pipeline } })).deal.id;
  if (wanted('note')) f.note = (await post(`/service/${f.deal}/notes`, { note: { body: 'A note' } })).note.id;
  if (wanted('task')) f.task = (await post(`/service/${f.deal}/tasks`, { task: { title: 'A task' } })).task.id;
  if (wanted('contact') || wanted('deal')) await post(`/service/${f.deal}/contacts`, { contact_id: f.contact });
  if (wanted('credential')) {
    const credential = (await post('/host/api-credentials/new', { name: `Conformance ${n}`, user: 1 })).credential; // the admin: an edit may deactivate the shared user
    Object.assign(f, { credential: credential.id, clientId: credential.client_id, clientSecret: credential.client_secret });
  }
  if (wanted('webhook')) f.webhook = (await post('/host/webhooks/new', { name: `Conformance ${n}`, url: 'https://example.com/hook', events: ['service.deal.won'] })).webhook.id;
  if (wanted('source')) f.source = (await post('/service/settings/inbound-webhooks/new', { source: { name: `Conformance ${n}`, pipeline: f.pipeline } })).source.id;
  return f;
}

/** The kind of thing an operation's path is about (its last path parameter). */
function target(path: string): string {
  const last = [...path.matchAll(/\{(\w+)\}/g)].at(-1)?.[1];
  const byParam: Record<string, string> = { noteId: 'note', taskId: 'task', contactId: 'contact', sourceId: 'source', deliveryId: 'webhook' };
  if (last && byParam[last]) return byParam[last];
  const prefix = /^\/(host\/[a-z-]+|service\/(pipelines|stages))\/\{id\}/.exec(path)?.[1];
  const byPrefix: Record<string, string> = {
    'host/roles': 'role', 'host/users': 'user', 'host/contacts': 'contact', 'host/api-credentials': 'credential',
    'host/webhooks': 'webhook', 'service/pipelines': 'pipeline', 'service/stages': 'stage',
  };
  return prefix ? byPrefix[prefix]! : 'deal';
}

/** Which fixture a path parameter names. */
function pathValue(path: string, name: string, f: Fixtures): string {
  if (name === 'noteId') return String(f.note);
  if (name === 'taskId') return String(f.task);
  if (name === 'contactId') return String(f.contact);
  if (name === 'sourceId') return String(f.source);
  if (name === 'deliveryId') return String(f.delivery);
  const prefix = /^\/(host\/[a-z-]+|service\/(pipelines|stages))\/\{id\}/.exec(path)?.[1];
  const byPrefix: Record<string, string> = {
    'host/roles': 'role', 'host/users': 'user', 'host/contacts': 'contact', 'host/api-credentials': 'credential',
    'host/webhooks': 'webhook', 'service/pipelines': 'pipeline', 'service/stages': 'stage',
  };
  return String(f[prefix ? byPrefix[prefix]! : 'deal']);
}

/** Inputs that name other things: their valid value is a fixture (the document cannot say which ids exist). */
function reference(name: string, f: Fixtures, path: string): unknown {
  const refs: Record<string, unknown> = {
    pipeline: f.pipeline, stage: f.stage, stage_id: path.endsWith('/stage') ? f.wonStage : f.stage, moveTo: f.wonStage,
    owner: 1, assignee: 1, user: f.user, role: f.role, contact_id: f.contact, roles: [f.role], ids: [f.deal],
    client_id: f.clientId, client_secret: f.clientSecret, position: 1, order: [f.stage, f.wonStage, f.lostStage],
  };
  return refs[name];
}
const REFERENCES = new Set(['pipeline', 'stage', 'stage_id', 'moveTo', 'owner', 'assignee', 'user', 'role', 'contact_id', 'roles', 'ids', 'order', 'client_id', 'client_secret', 'position', 'after']);
/** Inputs that are two ends of one range: a document cannot say that one must not come before the other. */
const RANGES: Record<string, string> = { from: 'to', to: 'from', closeDateFrom: 'closeDateTo', closeDateTo: 'closeDateFrom' };
/** The input a details key names, without brackets or indexes: deal[stage] -> stage, ids[0] -> ids. */
const inputName = (key: string) => key.replace(/\[\d+\]$/, '').split('[').at(-1)!.replace(']', '');

/** A valid value for a schema, from its own constraints. */
function sample(schema: Schema, name: string, f: Fixtures, path: string): unknown {
  const ref = schema.type === 'object' || schema.properties ? undefined : reference(name, f, path);
  if (ref !== undefined && valid(schema, ref)) return ref;
  if (schema.example !== undefined) return schema.example;
  if (schema.default !== undefined) return schema.default;
  if (schema.enum) return schema.enum.find((value: unknown) => value !== '') ?? schema.enum[0];
  const branches = schema.anyOf ?? schema.oneOf;
  if (branches) return sample(branches.find((branch: Schema) => !(branch.enum?.length === 1 && branch.enum[0] === '')) ?? branches[0], name, f, path);
  if (schema.type === 'object' || schema.properties) {
    return Object.fromEntries(Object.entries((schema.properties ?? {}) as Record<string, Schema>).map(([key, sub]) => [key, sample(sub, key, f, path)]));
  }
  if (schema.type === 'array') return Array.from({ length: Math.max(1, schema.minItems ?? 1) }, () => sample(schema.items ?? {}, name, f, path));
  if (schema.type === 'integer' || schema.type === 'number') return Math.max(schema.minimum ?? 1, Math.min(schema.maximum ?? 10, 10));
  if (schema.type === 'boolean') return true;
  if (schema.type === 'string') return stringSample(schema, name);
  return 'x';
}

function stringSample(schema: Schema, name: string): string {
  if (schema.format === 'email' || name === 'email') return `sample-${++counter}@example.com`;
  if (schema.format === 'uri' || name === 'url') return 'https://example.com/hook';
  if (schema.format === 'date-time') return '2026-05-01T10:00:00Z';
  if (schema.format === 'date' || /date/i.test(name) || schema.pattern?.includes('\\d{4}-')) return '2026-05-01';
  if (schema.pattern) {
    for (const candidate of [`sample-${++counter}`, '7', '50', '#1d4ed8']) if (new RegExp(schema.pattern, 'u').test(candidate)) return candidate;
  }
  if (name === 'secret') return '';
  if (name === 'currency') return 'USD';
  // Unique, so a second create or an edit does not meet a duplicate name (409).
  const base = name === 'username' ? `sample-${++counter}` : `Sample ${name} ${++counter}`;
  return base.padEnd(schema.minLength ?? 0, 'x').slice(0, schema.maxLength ?? 255);
}

/** Boundary values of one leaf schema, each labelled. */
function boundaries(schema: Schema): { label: string; value: unknown }[] {
  const out: { label: string; value: unknown }[] = [];
  for (const branch of schema.anyOf ?? schema.oneOf ?? []) out.push(...boundaries(branch));
  if (schema.enum) {
    for (const value of schema.enum) out.push({ label: `enum ${JSON.stringify(value)}`, value });
    out.push({ label: 'outside the enum', value: 'not-one-of-them' });
  }
  if (schema.type === 'integer' || schema.type === 'number') {
    if (schema.minimum !== undefined) out.push({ label: 'minimum', value: schema.minimum }, { label: 'minimum-1', value: schema.minimum - 1 });
    if (schema.maximum !== undefined && schema.maximum < 1e12) out.push({ label: 'maximum', value: schema.maximum }, { label: 'maximum+1', value: schema.maximum + 1 });
    if (schema.type === 'integer') out.push({ label: 'a fraction', value: 1.5 });
    if (schema.minimum === undefined) out.push({ label: 'negative', value: -1 });
    if (schema.maximum === undefined) out.push({ label: 'huge', value: 1e15 });
  }
  if (schema.type === 'string' && !schema.enum) {
    if (schema.minLength !== undefined) {
      out.push({ label: 'minLength', value: 'a'.repeat(schema.minLength) });
      if (schema.minLength > 0) out.push({ label: 'minLength-1', value: 'a'.repeat(schema.minLength - 1) });
    }
    if (schema.maxLength !== undefined && schema.maxLength <= 10_000) {
      out.push({ label: 'maxLength', value: 'a'.repeat(schema.maxLength) }, { label: 'maxLength+1', value: 'a'.repeat(schema.maxLength + 1) });
    }
    if (schema.pattern || schema.format) out.push({ label: 'not its pattern or format', value: 'not valid ~' });
    if (schema.format === 'email') out.push({ label: 'an email', value: 'b@example.org' });
    if (schema.format === 'uri') out.push({ label: 'a URL', value: 'https://example.org/x?y=1' });
    if (schema.pattern?.includes('\\d{4}') || schema.format === 'date') out.push({ label: 'date 0000-00-00', value: '0000-00-00' }, { label: 'date 2028-02-29', value: '2028-02-29' }, { label: 'date 2026-02-30', value: '2026-02-30' });
  }
  if (schema.type === 'array') {
    out.push({ label: 'empty array', value: [] });
    if (schema.items) for (const item of boundaries(schema.items)) out.push({ label: `item ${item.label}`, value: [item.value] });
  }
  if (schema.type === 'boolean' || (schema.anyOf ?? []).some((b: Schema) => b.type === 'boolean')) out.push({ label: 'false', value: false });
  return out;
}

const bracket = (path: (string | number)[]) => path.map((key, index) => (index === 0 ? String(key) : `[${key}]`)).join('');

function setAt(target: unknown, path: (string | number)[], value: unknown, remove = false): unknown {
  const copy = structuredClone(target) as Record<string, any>;
  let node = copy;
  for (const key of path.slice(0, -1)) node = node[key as string];
  if (remove) delete node[path.at(-1) as string];
  else node[path.at(-1) as string] = value;
  return copy;
}

/** Every leaf of a body schema with its path (arrays and objects of objects descended into). */
function leaves(schema: Schema, path: (string | number)[] = []): { path: (string | number)[]; schema: Schema; required: boolean }[] {
  const out: { path: (string | number)[]; schema: Schema; required: boolean }[] = [];
  const required = new Set<string>(schema.required ?? []);
  for (const [key, sub] of Object.entries((schema.properties ?? {}) as Record<string, Schema>)) {
    const here = [...path, key];
    out.push({ path: here, schema: sub, required: required.has(key) });
    if (sub.properties) out.push(...leaves(sub, here));
    if (sub.type === 'array' && sub.items?.properties) out.push(...leaves(sub.items, [...here, 0]));
  }
  return out;
}

function variants(operation: Operation, f: Fixtures): Variant[] {
  const params = (operation.op.parameters ?? []) as Schema[];
  const query: Record<string, unknown> = {};
  for (const param of params.filter((p) => p.in === 'query' && p.required)) query[param.name] = sample(param.schema, param.name, f, operation.path);
  const bodySchema = operation.op.requestBody?.content?.['application/json']?.schema as Schema | undefined;
  const body = bodySchema ? (bodySchema.oneOf ? sample(bodySchema.oneOf[0], '', f, operation.path) : sample(bodySchema, '', f, operation.path)) : undefined;
  const out: Variant[] = [{ label: 'valid', query, body }];
  if (bodySchema && operation.op.requestBody.content['application/x-www-form-urlencoded']) out.push({ label: 'valid, as a form', query, body, form: true });
  for (const param of params.filter((p) => p.in === 'query')) {
    for (const { label, value } of boundaries(param.schema)) {
      if (typeof value === 'object') continue;
      out.push({ label: `query ${param.name}: ${label}`, query: { ...query, [param.name]: value }, body, field: param.name, reference: REFERENCES.has(param.name) });
    }
  }
  if (bodySchema && !bodySchema.oneOf) {
    for (const leaf of leaves(bodySchema)) {
      const field = bracket(leaf.path);
      if (leaf.required) out.push({ label: `${field} missing`, query, body: setAt(body, leaf.path, undefined, true), field });
      if (leaf.schema.properties) continue;
      const reference = REFERENCES.has(inputName(field));
      for (const { label, value } of boundaries(leaf.schema)) out.push({ label: `${field}: ${label}`, query, body: setAt(body, leaf.path, value), field, reference: reference && !(Array.isArray(value) && value.length === 0) });
    }
  }
  if (bodySchema?.oneOf) {
    for (const branch of bodySchema.oneOf as Schema[]) {
      const base = sample(branch, '', f, operation.path) as Record<string, unknown>;
      // The value of an inline edit of owner is a reference like any other; of currency, a code.
      base.value = reference(String(base.field), f, operation.path) ?? (base.field === 'currency' ? 'EUR' : base.value);
      out.push({ label: `${base.field}: sample`, query, body: base });
      for (const { label, value } of boundaries(branch.properties.value)) out.push({ label: `${base.field}: ${label}`, query, body: { ...base, value }, field: 'value', reference: REFERENCES.has(String(base.field)) });
    }
  }
  return out;
}

/** Whether the query values are valid by the document (on the wire they are strings; numbers and booleans as text are too). */
function queryValid(operation: Operation, query: Record<string, unknown>): boolean {
  for (const param of (operation.op.parameters ?? []) as Schema[]) {
    if (param.in !== 'query') continue;
    const value = query[param.name];
    if (value === undefined) {
      if (param.required) return false;
      continue;
    }
    const text = String(value);
    const candidates: unknown[] = [text];
    if (/^-?\d+(\.\d+)?$/.test(text)) candidates.push(Number(text));
    if (text === 'true' || text === 'false') candidates.push(text === 'true');
    if (!candidates.some((candidate) => valid(param.schema, candidate))) return false;
  }
  return true;
}

/** Form values are text: qs with bracket names; numbers and booleans become their text. */
function formBody(body: unknown): string {
  return qs.stringify(body, { arrayFormat: 'brackets', encodeValuesOnly: true });
}

beforeAll(async () => {
  t = await setupApp();
  doc = (await t.app.inject({ method: 'GET', url: '/service/openapi.json' })).json();
});

describe('every operation answers as its document says', () => {
  it('sends each operation its valid request and the boundary values of its schemas', async () => {
    const operations: Operation[] = [];
    for (const [path, methods] of Object.entries(doc.paths as Record<string, Schema>)) {
      for (const [method, op] of Object.entries(methods)) operations.push({ method, path, op });
    }
    expect(operations.length).toBeGreaterThan(70);
    const problems: string[] = [];
    let sent = 0;
    let succeeded = 0;
    const succeededOps = new Set<string>();
    const firstStatus = new Map<string, string>();
    const shared = await fixtures();
    for (const operation of operations) {
      const name = `${operation.method.toUpperCase()} ${operation.path}`;
      // Deletes, removals and rotations get fixtures of their own; the rest share one set.
      // (a reorder too: it lists the pipeline's own stages, and other operations add stages to the shared one;
      // and the batch, which deletes the deals it names).
      // A webhook's test event needs an enabled webhook (an edit's boundary values may have disabled the shared one).
      // A user's edit deactivates (isActive false), and other operations name the shared user.
      const destructive =
        operation.method === 'delete' || /\/(delete|remove|rotate|reorder|batch|test)$/.test(operation.path) || operation.path === '/host/users/{id}/edit';
      const f = destructive ? await fixtures(shared, target(operation.path)) : shared;
      const url = operation.path.replace(/\{(\w+)\}/g, (_, param: string) => pathValue(operation.path, param, f));
      const bodySchema = operation.op.requestBody?.content?.['application/json']?.schema as Schema | undefined;
      for (const variant of variants(operation, f)) {
        const search = qs.stringify(variant.query);
        // The token endpoint takes the client's credentials, not a user's: no Basic header there.
        const send = operation.path === '/oauth/v2/token' ? (options: InjectOptions) => t.app.inject(options) : (options: InjectOptions) => t.call(options);
        const res = await send({
          method: operation.method.toUpperCase() as 'GET',
          url: search ? `${url}?${search}` : url,
          ...(variant.body === undefined
            ? {}
            : variant.form
              ? { headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: formBody(variant.body) }
              : { headers: { 'content-type': 'application/json' }, payload: JSON.stringify(variant.body) }),
        });
        sent += 1;
        if (variant.label === 'valid') firstStatus.set(name, `${res.statusCode} ${res.body.slice(0, 150)}`);
        const where = `${name} [${variant.label}] -> ${res.statusCode}`;
        const documented = operation.op.responses[String(res.statusCode)];
        if (!documented) {
          problems.push(`${where}: status not documented (${res.body.slice(0, 200)})`);
          continue;
        }
        const schema = documented.content?.['application/json']?.schema as Schema | undefined;
        if (schema && res.headers['content-type']?.toString().startsWith('application/json') && !valid(schema, res.json())) {
          problems.push(`${where}: body does not match the documented schema: ${ajv.errorsText(validators.get(schema)!.errors)} ${res.body.slice(0, 200)}`);
        }
        if (res.statusCode < 300) {
          succeeded += 1;
          succeededOps.add(name);
        }
        const validByDocument = queryValid(operation, variant.query) && (!bodySchema || variant.form || valid(bodySchema, variant.body));
        if (validByDocument && res.statusCode === 422) {
          const details = Object.keys(res.json().errors[0].details);
          // A valid-looking id that names nothing (the document cannot list which ids exist) is refused on that field alone.
          // (the pipeline of a stage, too: a new pipeline id may leave the given stage in another).
          const reference = variant.reference && details.every((key) => key === variant.field || REFERENCES.has(inputName(key)));
          // A range whose ends must be in order (from <= to, the other end taking its default) is refused on the other end.
          const range = variant.field !== undefined && details.length === 1 && RANGES[variant.field] === details[0];
          // Changing your own password needs the caller's current one, which no document can give.
          const credential = details.length === 1 && details[0] === 'current_password';
          if (!reference && !range && !credential) problems.push(`${where}: valid by the document but refused: ${res.body.slice(0, 300)}`);
        }
      }
    }
    expect(problems).toEqual([]);
    // The valid requests do get through: most operations succeed at least once.
    expect(sent).toBeGreaterThan(1000);
    expect(succeeded).toBeGreaterThan(100);
    // Not reached with valid input alone: the receive endpoint wants a signature (test/inbound-receive.test.ts), a
    // delivery exists only once the worker has sent one (test/delivery*.test.ts), changing your password needs the
    // current one (test/ui-settings.test.ts), and MCP wants the protocol's Accept header and messages (test/mcp.test.ts);
    // their error answers are checked above.
    const elsewhere = [
      'post /service/settings/inbound-webhooks/{sourceId}/receive',
      'get /host/webhooks/{id}/deliveries/{deliveryId}',
      'post /host/webhooks/{id}/deliveries/{deliveryId}/redeliver',
      'post /host/account/password',
      'post /service/mcp',
    ];
    expect(operations.filter((o) => !succeededOps.has(`${o.method.toUpperCase()} ${o.path}`) && !elsewhere.includes(`${o.method} ${o.path}`)).map((o) => `${o.method} ${o.path} ${firstStatus.get(`${o.method.toUpperCase()} ${o.path}`)}`)).toEqual([]);
  }, 120_000);
});

describe('the document names what the server accepts', () => {
  it('lists both body encodings for every body (JSON only where the raw bytes are signed)', () => {
    const encodings = new Map<string, string[]>();
    for (const [path, methods] of Object.entries(doc.paths as Record<string, Schema>)) {
      for (const [method, op] of Object.entries(methods)) if (op.requestBody) encodings.set(`${method} ${path}`, Object.keys(op.requestBody.content).sort());
    }
    expect(encodings.size).toBeGreaterThan(30);
    expect(encodings.get('post /service/settings/inbound-webhooks/{sourceId}/receive')).toEqual(['application/json']);
    encodings.delete('post /service/settings/inbound-webhooks/{sourceId}/receive');
    expect(new Set([...encodings.values()].map((types) => types.join(' ')))).toEqual(new Set(['application/json application/x-www-form-urlencoded']));
  });

  it('publishes bounds, formats and enums the validator enforces', () => {
    const body = (path: string) => (doc.paths[path].post as Schema).requestBody.content['application/json'].schema;
    const webhook = body('/host/webhooks/new').properties;
    expect(webhook.url.format).toBe('uri');
    expect(webhook.events.minItems).toBe(1);
    expect(body('/host/contacts/new').properties.email.format).toBe('email');
    expect(body('/service/pipelines/new').properties.stages).toMatchObject({ minItems: 1, maxItems: 100 });
    const limit = (doc.paths['/service/deals'].get.parameters as Schema[]).find((p) => p.name === 'limit')!.schema;
    expect(valid(limit, 200)).toBe(true);
    expect(valid(limit, '200')).toBe(true);
    expect(valid(limit, 201)).toBe(false);
    expect(valid(limit, '201')).toBe(false);
    const close = body('/service/deals/new').properties.deal.properties.closeDate;
    expect(valid(close, '2028-02-29')).toBe(true);
    expect(valid(close, '2026-02-29')).toBe(false);
    expect(valid(close, '0000-00-00')).toBe(false);
    expect(valid(close, null)).toBe(true);
  });
});

describe('published patterns are safe to run on any input', () => {
  it('refuses half a megabyte of spaces in a boolean field at once (no pattern backtracks quadratically)', async () => {
    const res = await t.call({ method: 'POST', url: '/host/roles/new', payload: { name: 'Spaces', isAdmin: `${' '.repeat(500_000)}x` } });
    expect(res.statusCode).toBe(422);
    expect(res.json().errors[0].details).toEqual({ isAdmin: ['Must be true or false'] });
  });
});
