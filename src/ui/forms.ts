import type { z } from 'zod';
import { AppError, ValidationError, type FieldErrors } from '../http/errors.js';
import { html, type Html, type Renderable } from './html.js';

/**
 * Forms of the pages: bodies are checked with the API's own zod schemas (the
 * contract's body formats), and any error, from validation or from a domain
 * rule, comes back as words keyed by the input's bracket name, shown next to
 * that input while the form keeps what the user typed.
 */

export type Values = Record<string, string>;

export interface FormState {
  values: Values;
  errors: FieldErrors;
  /** An error that names no input (permission, conflict). */
  message?: string;
}

export const emptyForm = (values: Values = {}): FormState => ({ values, errors: {} });

/** `{deal: {title: 'x'}}` → `{'deal[title]': 'x'}`: what the user typed, by input name. */
export function flatten(body: unknown, prefix = ''): Values {
  const out: Values = {};
  if (body === null || typeof body !== 'object') return out;
  for (const [key, value] of Object.entries(body as Record<string, unknown>)) {
    const name = prefix ? `${prefix}[${key}]` : key;
    // Lists of rows (stages[0][name]) and of values (permissions[0]) keep their index.
    if (value !== null && typeof value === 'object') Object.assign(out, flatten(value, name));
    else if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') out[name] = String(value);
  }
  return out;
}

const bracket = (path: PropertyKey[]) => path.map((part, i) => (i === 0 ? String(part) : `[${String(part)}]`)).join('');

export type Parsed<T> = { ok: true; data: T } | { ok: false; form: FormState };

export function parseForm<S extends z.ZodType>(schema: S, body: unknown): Parsed<z.output<S>> {
  const result = schema.safeParse(body ?? {});
  if (result.success) return { ok: true, data: result.data };
  const errors: FieldErrors = {};
  for (const issue of result.error.issues) (errors[bracket(issue.path) || 'body'] ??= []).push(issue.message);
  return { ok: false, form: { values: flatten(body), errors } };
}

/** A domain error (422 with details, 403, 404, 409) as form state; anything else is rethrown. */
export function formFromError(error: unknown, body: unknown): FormState {
  if (!(error instanceof AppError) || error.statusCode >= 500) throw error;
  const details = error.statusCode === 422 ? (error.details as FieldErrors) : {};
  const named = Object.keys(details).length > 0;
  return { values: flatten(body), errors: named ? details : {}, message: named ? undefined : error.message };
}

export const fieldErrors = (form: FormState, name: string): Html =>
  html`${(form.errors[name] ?? []).map((message) => html`<span class="field-error">${message}</span>`)}`;

interface InputOptions {
  type?: string;
  required?: boolean;
  placeholder?: string;
  step?: string;
  value?: string | number | null;
}

/** A labelled input showing what was typed (or the stored value) and its errors. */
export function input(form: FormState, name: string, label: string, options: InputOptions = {}): Html {
  const value = form.values[name] ?? (options.value === null || options.value === undefined ? '' : String(options.value));
  const invalid = form.errors[name] ? ' invalid' : '';
  return html`<label class="field${invalid}"><span>${label}</span>
    <input name="${name}" type="${options.type ?? 'text'}" value="${value}"${options.required ? html` required` : ''}${
      options.placeholder ? html` placeholder="${options.placeholder}"` : ''
    }${options.step ? html` step="${options.step}"` : ''}>${fieldErrors(form, name)}</label>`;
}

export function select(
  form: FormState,
  name: string,
  label: string,
  choices: { value: string | number; label: string }[],
  current: string | number | null | undefined,
  options: { empty?: string } = {},
): Html {
  const chosen = form.values[name] ?? (current === null || current === undefined ? '' : String(current));
  const invalid = form.errors[name] ? ' invalid' : '';
  return html`<label class="field${invalid}"><span>${label}</span><select name="${name}">
    ${selectOptions(choices, chosen, options.empty)}
  </select>${fieldErrors(form, name)}</label>`;
}

/** A select's options, `chosen` selected; `empty` labels a first option meaning "none". */
export function selectOptions(choices: { value: string | number; label: string }[], chosen: string, empty?: string): Html {
  return html`${empty !== undefined ? html`<option value="">${empty}</option>` : ''}
    ${choices.map((c) => html`<option value="${c.value}"${String(c.value) === chosen ? html` selected` : ''}>${c.label}</option>`)}`;
}

export const formMessage = (form: FormState): Renderable =>
  form.message ? html`<p class="form-error" role="alert">${form.message}</p>` : '';

/** For inputs a page builds itself (ids, cursors): a bad one is a 422 with the input named, like the API. */
export function check<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const parsed = parseForm(schema, value);
  if (!parsed.ok) throw new ValidationError(parsed.form.errors);
  return parsed.data;
}

export type Submitted<R> = { ok: true; result: R } | { ok: false; form: FormState; status: number };

/**
 * A form post in one step: the body checked with the API's schema, the API's
 * operation run, and any refusal (validation or a domain rule) turned into the
 * form again, with what was typed, the words next to the inputs, and the status
 * the API would have answered.
 */
export async function submitForm<S extends z.ZodType, R>(schema: S, body: unknown, run: (data: z.output<S>) => Promise<R>): Promise<Submitted<R>> {
  const parsed = parseForm(schema, body);
  if (!parsed.ok) return { ok: false, form: parsed.form, status: 422 };
  try {
    return { ok: true, result: await run(parsed.data) };
  } catch (error) {
    return { ok: false, form: formFromError(error, body), status: (error as AppError).statusCode };
  }
}
