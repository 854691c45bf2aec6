import { z } from 'zod';
import { formList } from '../../http/form.js';
import { bool, id, list, text } from '../../http/schemas.js';

/** Inputs and JSON of pipelines and stages; bodies mirror the request names (`pipeline[name]`, `stages[0][type]`). */

const stageType = z.enum(['open', 'won', 'lost'], { error: 'Must be open, won or lost' });
const percent = z
  .union([z.number(), z.string().trim().regex(/^\d+$/, 'Must be a whole number from 0 to 100')])
  .transform(Number)
  .pipe(z.number().int('Must be a whole number from 0 to 100').min(0, 'Must be at least 0').max(100, 'Must be at most 100'));

/** #rrggbb (any letter case, kept in lower case); empty or null: no colour. */
const color = z
  .union([z.null(), z.string().max(20, 'Must be a colour like #1d4ed8')], { error: 'Must be a colour like #1d4ed8' })
  .transform((value, ctx) => {
    const text = value?.trim() ?? '';
    if (text === '') return null;
    if (/^#[0-9a-fA-F]{6}$/.test(text)) return text.toLowerCase();
    ctx.addIssue({ code: 'custom', message: 'Must be a colour like #1d4ed8' });
    return z.NEVER;
  });

export const stageInput = z.object({ name: text(1, 255), type: stageType.default('open'), probability: percent.optional(), color: color.optional() });
const stageEdit = z.object({ name: text(1, 255).optional(), type: stageType.optional(), probability: percent.optional(), color: color.optional() });

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
