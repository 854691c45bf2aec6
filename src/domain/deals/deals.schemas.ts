import { z } from 'zod';
import { bool, id, isoDate, list, money, nullable, pageQuery, text } from '../../http/schemas.js';
import { ORDER_COLUMNS, type OrderBy } from './deals.list.js';

/**
 * Request and response shapes of the deal API. Bodies mirror the request
 * (`deal[title]` → { deal: { title } }) so validation errors name inputs as sent.
 */

const CURRENCIES = new Set(Intl.supportedValuesOf('currency'));
export const currency = z
  .string()
  .trim()
  .toUpperCase()
  .refine((code) => CURRENCIES.has(code), 'Must be an ISO 4217 currency code such as USD');

const dealFields = z.object({
  title: text(1, 255),
  amount: money.optional(),
  currency: currency.optional(),
  pipeline: id.optional(),
  stage: id.optional(),
  closeDate: nullable(isoDate).optional(),
  owner: nullable(id).optional(),
  customFields: z.record(z.string().max(100), z.unknown()).optional(),
});

export const createDealBody = z.object({ deal: dealFields });
export const updateDealBody = z.object({ deal: dealFields.partial() });
export type DealFieldsInput = z.infer<typeof dealFields>;

/** Form/JSON field names → the service's input names. */
export function toDealInput<T extends Partial<DealFieldsInput>>(fields: T) {
  return {
    title: fields.title,
    amount: fields.amount,
    currency: fields.currency,
    pipelineId: fields.pipeline,
    stageId: fields.stage,
    closeDate: fields.closeDate,
    ownerId: fields.owner,
    customFields: fields.customFields,
  };
}

/** A create body's fields → the service's input; a deal without a currency takes the configured default. */
export function toNewDealInput(fields: DealFieldsInput, defaultCurrency: string) {
  return { ...toDealInput(fields), title: fields.title, currency: fields.currency ?? defaultCurrency };
}

export const stageMoveBody = z.object({
  stage_id: id,
  lost_reason: nullable(text(1, 255)).optional(),
});

export const inlineBody = z.discriminatedUnion('field', [
  z.object({ field: z.literal('title'), value: text(1, 255) }),
  z.object({ field: z.literal('amount'), value: money }),
  z.object({ field: z.literal('currency'), value: currency }),
  z.object({ field: z.literal('closeDate'), value: nullable(isoDate) }),
  z.object({ field: z.literal('owner'), value: nullable(id) }),
]);

export const batchBody = z
  .object({
    ids: list(id, { min: [1, 'Send at least one id'], max: [200, 'Send at most 200 ids'] }),
    action: z.enum(['delete', 'reassign', 'move_stage']),
    owner: nullable(id).optional(),
    stage_id: id.optional(),
  })
  .superRefine((body, ctx) => {
    if (body.action === 'reassign' && body.owner === undefined) {
      ctx.addIssue({ code: 'custom', path: ['owner'], message: 'Required for reassign' });
    }
    if (body.action === 'move_stage' && body.stage_id === undefined) {
      ctx.addIssue({ code: 'custom', path: ['stage_id'], message: 'Required for move_stage' });
    }
  });

const lower = (value: unknown) => (typeof value === 'string' ? value.toLowerCase() : value);

export const listQuery = pageQuery.extend({
  pipeline: id.optional(),
  stage: id.optional(),
  status: z.enum(['open', 'won', 'lost']).optional(),
  owner: id.optional(),
  search: z.string().trim().max(255, 'Must be at most 255 characters').optional(),
  closeDateFrom: isoDate.optional(),
  closeDateTo: isoDate.optional(),
  orderBy: z.enum(Object.keys(ORDER_COLUMNS) as [OrderBy, ...OrderBy[]]).default('id'),
  orderByDir: z.preprocess(lower, z.enum(['asc', 'desc'])).default('asc'),
  after: z.string().max(1000).optional(),
});

export const committeeBody = z.object({
  contact_id: id,
  role: nullable(text(1, 100)).optional(),
  is_primary: bool.optional(),
});

export const noteBody = z.object({
  note: z.object({ body: z.string().min(1, 'Required').max(100_000, 'Must be at most 100000 characters') }),
});

const taskFields = z.object({
  title: text(1, 255),
  dueDate: nullable(isoDate).optional(),
  assignee: nullable(id).optional(),
});
export const createTaskBody = z.object({ task: taskFields });
export const updateTaskBody = z.object({ task: taskFields.partial() });

/* ---- responses ---- */

const named = z.object({ id: z.number(), name: z.string() });
const stageType = z.enum(['open', 'won', 'lost']);
const timestamp = z.string();

export const memberJson = z.object({
  contact_id: z.number(),
  role: z.string().nullable(),
  is_primary: z.boolean(),
  /** The host deleted this contact (or merged it into another); the deal keeps naming it. */
  deleted: z.boolean(),
  contact: z.object({
    id: z.number(),
    email: z.string(),
    first_name: z.string().nullable(),
    last_name: z.string().nullable(),
    company: z.string().nullable(),
  }),
});

export const noteJson = z.object({
  id: z.number(),
  deal: z.number(),
  body: z.string(),
  author: named.nullable(),
  createdAt: timestamp,
  updatedAt: timestamp,
});

export const taskJson = z.object({
  id: z.number(),
  deal: z.number(),
  title: z.string(),
  dueDate: z.string().nullable(),
  assignee: named.nullable(),
  isCompleted: z.boolean(),
  completedAt: timestamp.nullable(),
  createdAt: timestamp,
  updatedAt: timestamp,
});

export const dealSummaryJson = z.object({
  id: z.number(),
  title: z.string(),
  amount: z.number(),
  currency: z.string(),
  status: stageType,
  closeDate: z.string().nullable(),
  owner: named.nullable(),
  pipeline: named,
  stage: z.object({ id: z.number(), name: z.string(), type: stageType, position: z.number(), probability: z.number() }),
  customFields: z.record(z.string(), z.unknown()),
  source: z.object({ id: z.string(), name: z.string() }).nullable(),
  lostReason: z.string().nullable(),
  stageChangedAt: timestamp,
  wonAt: timestamp.nullable(),
  lostAt: timestamp.nullable(),
  createdBy: named.nullable(),
  createdAt: timestamp,
  updatedAt: timestamp,
});

export const dealFullJson = dealSummaryJson.extend({
  contacts: z.array(memberJson),
  notes: z.array(noteJson),
  tasks: z.array(taskJson),
});

export const dealResponse = z.object({ deal: dealFullJson });

export const listResponse = z.object({
  total: z.number(),
  totalApproximate: z.boolean(),
  page: z.number(),
  limit: z.number(),
  pages: z.number(),
  deals: z.array(dealSummaryJson),
  next: z.string().nullable(),
});

export const historyResponse = z.object({
  history: z.array(
    z.object({
      from: z.object({ id: z.number(), name: z.string(), type: z.string() }).nullable(),
      to: z.object({ id: z.number(), name: z.string(), type: z.string() }).nullable(),
      changed_by: z.object({ id: z.number().nullable(), name: z.string() }),
      changedAt: timestamp,
      secondsInPrevious: z.number().nullable(),
    }),
  ),
});

export const batchResponse = z.object({
  action: z.enum(['delete', 'reassign', 'move_stage']),
  succeeded: z.number(),
  failed: z.number(),
  results: z.array(
    z.object({
      id: z.number(),
      ok: z.boolean(),
      error: z.object({ code: z.number(), type: z.string(), message: z.string() }).optional(),
    }),
  ),
});
