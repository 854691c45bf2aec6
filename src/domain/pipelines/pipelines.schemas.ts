import { z } from 'zod';
import { formList } from '../../http/form.js';
import { bool, id, list, text } from '../../http/schemas.js';

/** Inputs and JSON of pipelines and stages; bodies mirror the request names (`pipeline[name]`, `stages[0][type]`). */

const stageType = z.enum(['open', 'won', 'lost'], { error: 'Must be open, won or lost' });
const percent = z
  .union([z.number(), z.string().trim().regex(/^\d+$/, 'Must be a whole number from 0 to 100')])
  .transform(Number)
  .pipe(z.number().int('Must be a whole number from 0 to 100').min(0, 'Must be at least 0').max(100, 'Must be at most 100'));

export const stageInput = z.object({ name: text(1, 255), type: stageType.default('open'), probability: percent.optional() });
const stageEdit = z.object({ name: text(1, 255).optional(), type: stageType.optional(), probability: percent.optional() });

const pipelineInput = z.object({ name: text(1, 255), isDefault: bool.optional(), roles: formList(id).optional() });

export const createPipelineBody = z.object({
  pipeline: pipelineInput,
  stages: list(stageInput).refine((stages) => stages.length >= 1 && stages.length <= 100, 'Must have 1 to 100 stages'),
});
export const editPipelineBody = z.object({ pipeline: pipelineInput.partial() });
export const addStageBody = z.object({ stage: stageInput.extend({ position: id.optional() }) });
export const editStageBody = z.object({ stage: stageEdit });
export const reorderBody = z.object({ order: list(id) });
export const deleteStageQuery = z.object({ moveTo: id.optional() });

export const stageJson = z.object({
  id: z.number(),
  name: z.string(),
  type: stageType,
  position: z.number(),
  probability: z.number(),
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
