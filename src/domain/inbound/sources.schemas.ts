import { z } from 'zod';
import { bool, id, nullable, positiveInt, text } from '../../http/schemas.js';
import { fieldMapInput } from './field-map.js';

/** Body and query formats of inbound source management, shared by the API routes and the settings pages. */

export const sourceFields = z.object({
  name: text(1, 255),
  pipeline: id.optional(),
  /** Where created deals start; empty or null: the pipeline's first stage. */
  stage: nullable(id).optional(),
  /** Who owns created deals; empty or null: nobody. */
  owner: nullable(id).optional(),
  /** Where each deal field is read from in the sender's JSON (dot paths); given, it replaces the mapping. */
  fields: fieldMapInput.optional(),
  enabled: bool.optional(),
});
export const createSourceBody = z.object({ source: sourceFields });
export const editSourceBody = z.object({ source: sourceFields.partial() });

export const LOG_OUTCOMES = ['created', 'updated', 'replayed', 'rejected'] as const;
export type LogOutcome = (typeof LOG_OUTCOMES)[number];

export const sourceLogQuery = z.object({
  limit: positiveInt(200, 'Must be at most 200').default(50),
  outcome: z.enum(LOG_OUTCOMES, { message: `Must be one of ${LOG_OUTCOMES.join(', ')}` }).optional(),
});
