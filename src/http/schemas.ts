import { z } from 'zod';

/**
 * Shared input types. Form bodies carry every value as a string, JSON bodies as
 * typed values; these accept both and produce one typed result.
 */

/** A positive integer id, from `7` or `"7"`. */
export const id = z
  // The branches carry the bounds too, so the published schema says what is accepted (minimum 1, digits only).
  .union([z.number().int().min(1).max(2_147_483_647), z.string().regex(/^[1-9]\d{0,9}$/)], { error: 'Must be a positive integer' })
  .transform(Number)
  .pipe(z.number().int('Must be a positive integer').min(1, 'Must be a positive integer').max(2_147_483_647, 'Too large'));

export const idParams = z.object({ id });

/** Money: at most 13 integer digits and 2 decimals, kept as a decimal string (never a float). */
export const money = z
  .union([z.number(), z.string().trim()])
  .transform((value) => (typeof value === 'number' ? value.toString() : value))
  .pipe(z.string().regex(/^\d{1,13}(\.\d{1,2})?$/, 'Must be a non-negative amount with at most 2 decimals'));

/** A real calendar date in YYYY-MM-DD (2026-02-30 is refused). */
export const isoDate = z
  .string()
  .trim()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'Must be a date in YYYY-MM-DD format')
  .refine((value) => {
    const date = new Date(`${value}T00:00:00Z`);
    return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === value;
  }, 'Must be a real calendar date');

const TRUE = new Set(['true', '1', 'on', 'yes']);
const FALSE = new Set(['false', '0', 'off', 'no', '']);

/** A boolean from `true`, `"true"`, `"1"`, `"on"`, ... */
export const bool = z.union([z.boolean(), z.string(), z.number()]).transform((value, ctx) => {
  if (typeof value === 'boolean') return value;
  const text = String(value).trim().toLowerCase();
  if (TRUE.has(text)) return true;
  if (FALSE.has(text)) return false;
  ctx.addIssue({ code: 'custom', message: 'Must be true or false' });
  return z.NEVER;
});

/** Text with surrounding white space removed and a length range. */
export const text = (min: number, max: number) =>
  z
    .string()
    .trim()
    .min(min, min === 1 ? 'Required' : `Must be at least ${min} characters`)
    .max(max, `Must be at most ${max} characters`);

/** For optional fields an empty form value means "clear it": '' and null become null. */
export const nullable = <T extends z.ZodType>(schema: T) =>
  // A clone: zod's OpenAPI 3.0 output drops a schema reused elsewhere in the same body from a nullable union.
  z.union([z.literal('').transform(() => null), z.null(), schema.clone()]);

/** An array from `ids[]=1&ids[]=2`, `{"ids":[1,2]}` or a single `ids=1`. */
export const list = <T extends z.ZodType>(item: T) =>
  z.preprocess((value) => (value === undefined || Array.isArray(value) ? value : [value]), z.array(item));

export const pageQuery = z.object({
  page: id.default(1),
  limit: id.pipe(z.number().max(200, 'Must be at most 200')).default(30),
});

/** Every success is a JSON object; this is the one for "it worked". */
export const successResponse = z.object({ success: z.literal(true) });

/** Administration of the host's people and of outbound subscriptions. */
export const hostAdmin = { permission: 'host:admin' } as const;

export const timestamps = { createdAt: z.string(), updatedAt: z.string() };

export const searchQuery = pageQuery.extend({ search: z.string().trim().max(255).optional() });

export const pageFields = { total: z.number(), page: z.number(), limit: z.number(), pages: z.number() };
