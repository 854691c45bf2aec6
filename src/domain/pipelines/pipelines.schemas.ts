import { z } from 'zod';
import { formList } from '../../http/form.js';
import { bool, id, list, text } from '../../http/schemas.js';

/** Inputs and JSON of pipelines and stages; bodies mirror the request names (`pipeline[name]`, `stages[0][type]`). */

const stageType = z.enum(['open', 'won', 'lost'], { error: 'Must be open, won or lost' });
const PERCENT = 'Must be a whole number from 0 to 100';
const percent = z
  // Both branches carry the bounds, so the document says 0 to 100 too.
  .union([z.number().int(PERCENT).min(0, PERCENT).max(100, PERCENT), z.string().trim().regex(/^(?:100|[1-9]?\d)$/, PERCENT)], { error: PERCENT })
  .transform(Number)
  .pipe(z.number().int('Must be a whole number from 0 to 100').min(0, 'Must be at least 0').max(100, 'Must be at most 100'));

/** #rrggbb (any letter case, kept in lower case); empty or null: no colour. The pattern is published as is. */
const color = z
  .union([z.null(), z.string().max(20, 'Must be a colour like #1d4ed8').regex(/^\s*(#[0-9a-fA-F]{6})?\s*$/, 'Must be a colour like #1d4ed8')], {
    error: 'Must be a colour like #1d4ed8',
  })
  .transform((value) => {
    const text = value?.trim() ?? '';
    return text === '' ? null : text.toLowerCase();
  });

export const stageInput = z.object({ name: text(1, 255), type: stageType.default('open'), probability: percent.optional(), color: color.optional() });
const stageEdit = z.object({ name: text(1, 255).optional(), type: stageType.optional(), probability: percent.optional(), color: color.optional() });

const pipelineInput = z.object({ name: text(1, 255), isDefault: bool.optional(), roles: formList(id).optional() });

export const createPipelineBody = z.object({
  pipeline: pipelineInput,
  stages: list(stageInput, { min: [1, 'Must have 1 to 100 stages'], max: [100, 'Must have 1 to 100 stages'] }),
});
export const editPipelineBody = z.object({ pipeline: pipelineInput.partial() });
export const addStageBody = z.object({ stage: stageInput.extend({ position: id.optional() }) });
export const editStageBody = z.object({ stage: stageEdit });
// Every pipeline has 1 to 100 stages; which ids, the service checks.
export const reorderBody = z.object({ order: list(id, { min: [1, "Must list each of the pipeline's stage ids exactly once"], max: [100, "Must list each of the pipeline's stage ids exactly once"] }) });
export const deleteStageQuery = z.object({ moveTo: id.optional() });

export const stageJson = z.object({
  id: z.number(),
  name: z.string(),
  type: stageType,
  position: z.number(),
  probability: z.number(),
  color: z.string().nullable().describe('#rrggbb, or null for the default look'),
});
export const pipelineRef = z.object({ id: z.number(), name: z.string() });
export const stageWithPipelineJson = stageJson.extend({ pipeline: pipelineRef });
export const pipelineJson = z.object({
  id: z.number(),
  name: z.string(),
  isDefault: z.boolean(),
  roles: z.array(z.number()).describe('Role ids the pipeline is limited to; empty: every role'),
  stages: z.array(stageJson),
});
