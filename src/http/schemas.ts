import { z } from 'zod';

/**
 * Shared input types. Form bodies carry every value as a string, JSON bodies as
 * typed values; these accept both and produce one typed result.
 */

/**
 * The decimal numbers 1 to `max` as a pattern (no leading zeros), so a form's
 * text carries the same bounds as a JSON number: 1 to 200 is
 * `^(?:[1-9]\d{0,1}|[1-1]\d{2}|200)$` (shorter numbers, then a smaller digit
 * at each position of the maximum, then the maximum itself).
 */
export function digitsUpTo(max: number): RegExp {
  const digits = String(max);
  const shorter = digits.length > 1 ? [`[1-9]\\d{0,${digits.length - 2}}`] : [];
  const same: string[] = [];
  for (let i = 0; i < digits.length; i += 1) {
    const low = i === 0 ? 1 : 0;
    const high = Number(digits[i]) - 1;
    if (high >= low) same.push(`${digits.slice(0, i)}[${low}-${high}]${i < digits.length - 1 ? `\\d{${digits.length - 1 - i}}` : ''}`);
  }
  return new RegExp(`^(?:${[...shorter, ...same, digits].join('|')})$`);
}

/** A whole number from 1 to `max`, from `7` or `"7"`; both branches carry the bounds, so the document says what is accepted. */
export const positiveInt = (max: number, tooLarge = 'Too large') => {
  // A union answers the issues of the branch whose type matched, so each branch carries the words too.
  const words = max === 2_147_483_647 ? 'Must be a positive integer' : `Must be a whole number from 1 to ${max}`;
  return z
    .union([z.number().int(words).min(1, words).max(max, tooLarge), z.string().regex(digitsUpTo(max), words)], { error: words })
    .transform(Number)
    .pipe(z.number().int('Must be a positive integer').min(1, 'Must be a positive integer').max(max, tooLarge));
};

/** A positive integer id, from `7` or `"7"` (at most 2147483647, PostgreSQL's integer). */
export const id = positiveInt(2_147_483_647);

export const idParams = z.object({ id });

const MONEY = 'Must be a non-negative amount with at most 2 decimals';

/** Money: at most 13 integer digits and 2 decimals, kept as a decimal string (never a float). */
export const money = z
  // The branches publish the bounds: 0 to 9999999999999.99, text as digits with at most 2 decimals.
  .union([z.number().min(0, MONEY).max(9_999_999_999_999.99, MONEY), z.string().trim().regex(/^\d{1,13}(\.\d{1,2})?$/, MONEY)], { error: MONEY })
  .transform((value) => (typeof value === 'number' ? value.toString() : value))
  .pipe(z.string().regex(/^\d{1,13}(\.\d{1,2})?$/, 'Must be a non-negative amount with at most 2 decimals'));

/** A real calendar date in YYYY-MM-DD (2026-02-30 is refused). */
const DATE_FORMAT = /^\d{4}-\d{2}-\d{2}$/;
export const isoDate = z
  .string()
  .trim()
  .regex(DATE_FORMAT, 'Must be a date in YYYY-MM-DD format')
  // Months 01-12, days that exist in that month, 29 February in leap years only (one message per value)...
  .refine((value) => !DATE_FORMAT.test(value) || z.regexes.date.test(value), 'Must be a real calendar date')
  // ... and the document publishes exactly that as the pattern.
  .meta({ pattern: z.regexes.date.source });

const TRUE = new Set(['true', '1', 'on', 'yes']);
/** One word, or nothing, with spaces around; no two adjacent `\s*`, so a long run of spaces cannot backtrack quadratically. */
const BOOL_TEXT = /^\s*(?:(?:true|1|on|yes|false|0|off|no)\s*)?$/i;

/** A boolean from `true`, `"true"`, `"1"`, `"on"`, `1`, ... (the published branches list the words and numbers accepted). */
export const bool = z
  .union([z.boolean(), z.literal(0), z.literal(1), z.string().regex(BOOL_TEXT, 'Must be true or false')], {
    error: 'Must be true or false',
  })
  .transform((value) => (typeof value === 'boolean' ? value : TRUE.has(String(value).trim().toLowerCase())));

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
  z.union([z.literal('').transform(() => null), z.null(), schema.clone()], {
    // Refused by every branch: say what the value itself should be (the last branch's words), not "Invalid value".
    error: (issue) => (issue.code === 'invalid_union' ? (issue as { errors?: { message?: string }[][] }).errors?.at(-1)?.[0]?.message : undefined),
  });

/** An array from `ids[]=1&ids[]=2`, `{"ids":[1,2]}` or a single `ids=1`; bounds on its length are published. */
export const list = <T extends z.ZodType>(item: T, bounds: { min?: [number, string]; max?: [number, string] } = {}) => {
  let array = z.array(item);
  if (bounds.min) array = array.min(...bounds.min);
  if (bounds.max) array = array.max(...bounds.max);
  return z.preprocess((value) => (value === undefined || Array.isArray(value) ? value : [value]), array);
};

export const pageQuery = z.object({
  page: id.default(1),
  limit: positiveInt(200, 'Must be at most 200').default(30),
});

/** Every success is a JSON object; this is the one for "it worked". */
export const successResponse = z.object({ success: z.literal(true) });

/** Administration of the host's people and of outbound subscriptions. */
export const hostAdmin = { permission: 'host:admin' } as const;

export const timestamps = { createdAt: z.string(), updatedAt: z.string() };

export const searchQuery = pageQuery.extend({ search: z.string().trim().max(255).optional() });

export const pageFields = { total: z.number(), page: z.number(), limit: z.number(), pages: z.number() };
