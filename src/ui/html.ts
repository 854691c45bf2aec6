/**
 * An auto-escaping HTML builder. `html` is a tagged template: every
 * interpolation is escaped unless it is already an `Html` fragment (built by
 * `html` itself, or `raw()` for markup we trust, such as sanitized note bodies).
 * Arrays are joined, null/undefined/false print nothing. Escaping covers text
 * and quoted attribute values alike, so `title="${value}"` is safe too; never
 * interpolate into an unquoted attribute, a tag name, a URL scheme or a script.
 */

export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '`': '&#96;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (char) => ESCAPES[char]!);
}

export type Renderable = Html | string | number | boolean | null | undefined | Renderable[];

function render(value: Renderable): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof Html) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: Renderable[]): Html {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]!) + strings[i + 1]!;
  return new Html(out);
}

/** Markup that is already safe (sanitized on save, or built by code). The one way past escaping. */
export const raw = (markup: string): Html => new Html(markup);

/** `selected`/`checked`/`disabled` style boolean attributes. */
export const attr = (name: string, on: boolean): Html => new Html(on ? ` ${name}` : '');

/** A URL path with an escaped, encoded query string (values are always encoded). */
export function href(path: string, query: Record<string, string | number | undefined | null> = {}): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined && value !== null && value !== '') params.set(key, String(value));
  const search = params.toString();
  return search ? `${path}?${search}` : path;
}
