import { z } from 'zod';
import { id } from '../../http/schemas.js';

/** The pipeline summary's query and JSON (summary.service.ts), as the OpenAPI document publishes them. */

export const summaryQuery = z.object({
  status: z.enum(['open', 'won', 'lost', 'all']).default('open').describe('Which deals count; default open'),
  owner: id.optional(),
  search: z.string().trim().max(255, 'Must be at most 255 characters').optional().describe('Title contains'),
});

const currencyFigures = z.object({
  currency: z.string(),
  count: z.number().int(),
  amount: z.number(),
  weighted: z.number().describe("Sum of amount × the stage's probability / 100, rounded to cents per stage"),
});

export const summaryJson = z.object({
  pipeline: z.object({ id: z.number().int(), name: z.string() }),
  status: z.enum(['open', 'won', 'lost', 'all']),
  stages: z.array(
    z.object({
      stage: z.object({ id: z.number().int(), name: z.string(), type: z.enum(['open', 'won', 'lost']), position: z.number().int(), probability: z.number() }),
      currencies: z.array(currencyFigures).describe('One entry per currency among the stage’s deals; empty when it has none'),
    }),
  ),
  totals: z.array(currencyFigures).describe('The whole pipeline, per currency'),
});
