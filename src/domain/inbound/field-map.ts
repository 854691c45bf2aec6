import { z } from 'zod';

/**
 * A source's field mapping: for a sender whose JSON does not use this
 * service's field names (a form builder posting `{"subject", "lead":{"email"}}`),
 * where to read each deal field from, as a dot path into the received object.
 * Fields without an entry are read under their own name, so an empty mapping
 * changes nothing. Values are taken as sent; the receive's rules check them
 * afterwards under the target's name.
 */

export const FIELD_TARGETS = [
  'title',
  'amount',
  'close_date',
  'external_id',
  'custom_fields',
  'contact_email',
  'contact_first_name',
  'contact_last_name',
  'contact_company',
] as const;

export type FieldTarget = (typeof FIELD_TARGETS)[number];
export type FieldMap = Partial<Record<FieldTarget, string>>;

const FORBIDDEN = new Set(['__proto__', 'prototype', 'constructor']);
const MAX_DEPTH = 5;

const path = z
  .string('Must be a string')
  .trim()
  .max(200, 'Must be at most 200 characters')
  .refine((value) => value === '' || value.split('.').every((part) => part.length > 0 && !FORBIDDEN.has(part)), {
    message: 'Must be field names joined by dots, such as lead.email',
  })
  .refine((value) => value.split('.').length <= MAX_DEPTH, `Must be at most ${MAX_DEPTH} names deep`);

/** The mapping as forms and JSON send it: an empty path means "under its own name" and is dropped. */
export const fieldMapInput = z
  .strictObject(Object.fromEntries(FIELD_TARGETS.map((target) => [target, path.optional()])) as Record<FieldTarget, z.ZodOptional<typeof path>>, {
    error: (issue) => (issue.code === 'unrecognized_keys' ? `Only these fields can be mapped: ${FIELD_TARGETS.join(', ')}` : 'Must be an object'),
  })
  .transform((map) => Object.fromEntries(Object.entries(map).filter(([, value]) => value)) as FieldMap);

function read(body: Record<string, unknown>, dotted: string): unknown {
  let value: unknown = body;
  for (const part of dotted.split('.')) {
    if (value === null || typeof value !== 'object' || Array.isArray(value) || !Object.hasOwn(value, part)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/** The body with each mapped field read from its path (absent there: left as the body has it). */
export function applyFieldMap(map: FieldMap, body: Record<string, unknown>): Record<string, unknown> {
  const entries = Object.entries(map) as [FieldTarget, string][];
  if (entries.length === 0) return body;
  const out: Record<string, unknown> = { ...body };
  for (const [target, from] of entries) {
    const value = read(body, from);
    if (value === undefined) continue;
    if (target.startsWith('contact_')) {
      const contact = out.contact !== null && typeof out.contact === 'object' && !Array.isArray(out.contact) ? out.contact : {};
      out.contact = { ...(contact as Record<string, unknown>), [target.slice('contact_'.length)]: value };
    } else {
      out[target] = value;
    }
  }
  return out;
}
