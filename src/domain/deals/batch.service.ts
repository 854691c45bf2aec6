import type { Db } from '../../db/database.js';
import type { FastifyError } from 'fastify';
import { toAppError } from '../../http/error-handler.js';
import { ValidationError } from '../../http/errors.js';
import type { Actor } from '../../host/permissions.js';
import type { People } from '../../host/port.js';
import { findStage, visiblePipelineIds } from '../pipelines/pipelines.repository.js';
import { actorContext, lockDealFor } from './deal-access.js';
import { assertUser, DEAL_WRITE_NAMES, deleteLockedDeal, patchLockedDeal } from './deal-write.js';
import { moveLockedDeal } from './stage-move.js';

/**
 * Batch actions. The request as a whole is validated first (a bad owner or
 * stage is a 422 before anything changes); then every deal gets its own
 * transaction and its own permission check, so one failure (not found,
 * forbidden) never undoes or blocks the others.
 */

export type BatchRequest =
  | { action: 'delete'; ids: number[] }
  | { action: 'reassign'; ids: number[]; owner: number | null }
  | { action: 'move_stage'; ids: number[]; stageId: number };

export interface BatchItemResult {
  id: number;
  ok: boolean;
  error?: { code: number; type: string; message: string };
}

export interface BatchResult {
  action: BatchRequest['action'];
  succeeded: number;
  failed: number;
  results: BatchItemResult[];
}

async function validate(db: Db, actor: Actor, request: BatchRequest) {
  if (request.action === 'reassign') await assertUser(db, request.owner, 'owner');
  if (request.action === 'move_stage') {
    const stage = await findStage(db, request.stageId);
    const visible = await visiblePipelineIds(db, actor);
    if (!stage || (visible !== 'all' && !visible.includes(stage.pipeline_id))) throw ValidationError.field('stage_id', 'Unknown stage');
    return stage;
  }
  return undefined;
}

export async function runBatch(db: Db, people: People, actor: Actor, request: BatchRequest): Promise<BatchResult> {
  if (request.action === 'reassign' && request.owner) await people.users.ensure([request.owner]);
  const stage = await validate(db, actor, request);
  const ctx = actorContext(actor);
  const results: BatchItemResult[] = [];
  for (const id of new Set(request.ids)) {
    try {
      await db.transaction().execute(async (trx) => {
        if (request.action === 'delete') {
          await lockDealFor(trx, actor, id, 'delete');
          await deleteLockedDeal(trx, ctx, id);
          return;
        }
        const deal = await lockDealFor(trx, actor, id, 'edit');
        if (request.action === 'reassign') {
          await patchLockedDeal(trx, ctx, deal, { ownerId: request.owner }, { scope: 'all', names: { ...DEAL_WRITE_NAMES, owner: 'owner' } });
        } else {
          await moveLockedDeal(trx, ctx, deal, stage!);
        }
      });
      results.push({ id, ok: true });
    } catch (error) {
      // An item's own failure (403, 404, a stage deleted meanwhile, ...) is its result; a fault still fails the request.
      const mapped = toAppError(error as FastifyError);
      if (!mapped || mapped.statusCode >= 500) throw error;
      results.push({ id, ok: false, error: { code: mapped.statusCode, type: mapped.type, message: mapped.message } });
    }
  }
  const succeeded = results.filter((r) => r.ok).length;
  return { action: request.action, succeeded, failed: results.length - succeeded, results };
}
