import { z } from 'zod';
import { ValidationError } from '../../http/errors.js';
import { isoDate, money } from '../../http/schemas.js';
import type { DealCreateInput, DealUpdateInput } from '../deals/deal-context.js';

/**
 * The body of a receive (interface.md section 4) and how it maps onto a deal.
 * A JSON `null` counts as "not given", so a sender's empty fields never wipe data.
 */

/** custom_fields values may nest (objects, arrays) but not without bound. */
const MAX_CUSTOM_FIELD_DEPTH = 8;

function depthWithin(value: unknown, limit: number): boolean {
  if (value === null || typeof value !== 'object') return true;
  if (limit === 0) return false;
  return Object.values(value).every((inner) => depthWithin(inner, limit - 1));
}

const requiredString = (message = 'Must be a string') =>
  z.string({ error: (issue) => (issue.input === undefined ? 'Required' : message) });

const optionalText = (max: number) =>
  z.string('Must be a string').trim().max(max, `Must be at most ${max} characters`).nullish();

const contact = z.object(
  {
    email: requiredString()
      .trim()
      .min(1, 'Required')
      .max(255, 'Must be at most 255 characters')
      .pipe(z.email('Must be an email address')),
    first_name: optionalText(255),
    last_name: optionalText(255),
    company: optionalText(255),
  },
  'Must be an object',
);

const customFields = z
  .record(
    z
      .string()
      .min(1, 'Keys must not be empty')
      .max(100, 'Keys must be at most 100 characters')
      .refine((key) => key !== '__proto__', 'This key is not allowed'),
    z.unknown(),
    'Must be an object with string keys',
  )
  .superRefine((fields, ctx) => {
    for (const [key, value] of Object.entries(fields)) {
      if (!depthWithin(value, MAX_CUSTOM_FIELD_DEPTH)) {
        ctx.addIssue({ code: 'custom', path: [key], message: `Must nest at most ${MAX_CUSTOM_FIELD_DEPTH} levels` });
      }
    }
  });

export const receiveBody = z
  .object({
    title: z.string('Must be a string').trim().min(1, 'Required').max(255, 'Must be at most 255 characters').nullish(),
    amount: z
      .number('Must be a number')
      .transform((value, ctx) => {
        const parsed = money.safeParse(value);
        if (parsed.success) return parsed.data;
        ctx.addIssue({ code: 'custom', message: parsed.error.issues[0]!.message });
        return z.NEVER;
      })
      .nullish(),
    close_date: z.string('Must be a date in YYYY-MM-DD format').pipe(isoDate).nullish(),
    external_id: z
      .union(
        [z.string().trim().min(1, 'Must not be empty').max(255, 'Must be at most 255 characters'), z.number().int().min(0).transform(String)],
        'Must be a string or a non-negative integer',
      )
      .nullish(),
    contact: contact.nullish(),
    custom_fields: customFields.nullish(),
  })
  .superRefine((body, ctx) => {
    // Without an external_id every receive creates a deal, and a deal needs a title.
    if (body.external_id == null && body.title == null) ctx.addIssue({ code: 'custom', path: ['title'], message: 'Required' });
  });

export type ReceiveBody = z.output<typeof receiveBody>;

/** The raw bytes as a JSON object, or a 422 naming the body. */
export function parseJsonObject(raw: Buffer): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(raw.toString('utf8'));
  } catch {
    throw ValidationError.field('body', 'Body is not valid JSON');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw ValidationError.field('body', 'Body must be a JSON object');
  }
  return value as Record<string, unknown>;
}

const given = <T>(value: T | null | undefined): T | undefined => (value === null ? undefined : value);

export function toDealUpdate(body: ReceiveBody): DealUpdateInput {
  return {
    title: given(body.title),
    amount: given(body.amount),
    closeDate: given(body.close_date),
    customFields: given(body.custom_fields),
  };
}

export function toDealCreate(
  body: ReceiveBody,
  source: { id: string; pipelineId: number; stageId: number | null; ownerId: number | null; currency: string },
): DealCreateInput {
  if (body.title == null) throw ValidationError.field('title', 'Required');
  return {
    ...toDealUpdate(body),
    title: body.title,
    currency: source.currency,
    pipelineId: source.pipelineId,
    stageId: source.stageId ?? undefined,
    ownerId: source.ownerId,
    sourceId: source.id,
    externalId: given(body.external_id),
  };
}
