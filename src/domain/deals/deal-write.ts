import type { Executor, Trx } from '../../db/database.js';
import { recordDealEvent, recordDealEvents } from '../../events/events.js';
import { NotFoundError, ValidationError } from '../../http/errors.js';
import { contactAddedEvent } from './committee.service.js';
import { sourceExtra } from './deal-access.js';
import { formatMoney } from '../money.js';
import {
  findActiveUser,
  deleteDealRow,
  insertDeals,
  lockDeal,
  updateDealFields,
  type DealFieldValues,
  type DealRow,
} from './deals.repository.js';
import type { DealCreateInput, DealUpdateInput, DealWriteContext } from './deal-context.js';
import { DEAL_FIELD_NAMES, moveLockedDeal, resolveStage, type PipelineScope, type PlacementNames } from './stage-move.js';
import type { StageRow } from '../pipelines/pipelines.repository.js';

/**
 * The write rules of a deal, inside the caller's transaction: reference
 * validation, change detection, the stage move and the events. No permission
 * checks here; callers pass the pipelines the caller may use as `scope`.
 */

export interface WriteOptions {
  scope: PipelineScope;
  names: PlacementNames & { owner: string };
}

export const DEAL_WRITE_NAMES: WriteOptions['names'] = { ...DEAL_FIELD_NAMES, owner: 'deal[owner]' };
export const INTERNAL: WriteOptions = { scope: 'all', names: DEAL_WRITE_NAMES };

/** Owners and assignees must be active host users: 422 on the input `name` otherwise (no user given is fine). */
export async function assertUser(db: Executor, id: number | null | undefined, name: string): Promise<void> {
  if (id === null || id === undefined) return;
  if (!(await findActiveUser(db, id))) throw ValidationError.field(name, 'Unknown user');
}

export interface NewDealItem {
  ctx: DealWriteContext;
  input: DealCreateInput;
}

/**
 * Creates deals in one go: each placement and owner is checked once however
 * many deals share it, then the rows with their first history entries and
 * first contacts are written in one statement, and their events
 * (`service.deal.created`, then `service.deal.contact_added` for a first
 * contact) in one call. A single create is a batch of one.
 */
export async function createDeals(trx: Trx, items: NewDealItem[], options: WriteOptions): Promise<{ id: number }[]> {
  if (items.length === 0) return [];
  const stages = new Map<string, StageRow>();
  const owners = new Set<number>();
  const placed: (NewDealItem & { stage: StageRow; ownerId: number | null })[] = [];
  for (const { ctx, input } of items) {
    const placement = `${input.pipelineId ?? ''}:${input.stageId ?? ''}`;
    if (input.stage) stages.set(placement, input.stage);
    else if (!stages.has(placement)) stages.set(placement, await resolveStage(trx, input, options.names, options.scope));
    const ownerId = input.ownerId === undefined ? ctx.changedBy.id : input.ownerId;
    if (ownerId !== null && !owners.has(ownerId)) {
      await assertUser(trx, ownerId, options.names.owner);
      owners.add(ownerId);
    }
    placed.push({ ctx, input, stage: stages.get(placement)!, ownerId });
  }

  const rows = await insertDeals(
    trx,
    placed.map(({ ctx, input, stage, ownerId }) => ({
      title: input.title,
      amount: input.amount ?? '0',
      currency: input.currency,
      pipeline_id: stage.pipeline_id,
      stage_id: stage.id,
      status: stage.type,
      close_date: input.closeDate ?? null,
      owner_id: ownerId,
      created_by_id: input.createdById === undefined ? ctx.changedBy.id : input.createdById,
      custom_fields: input.customFields ?? {},
      source_id: input.sourceId ?? null,
      external_id: input.externalId ?? null,
      changed_by: ctx.changedBy,
      first_contact_id: input.contact?.id ?? null,
      // created, and contact_added with a first contact: the events below, already counted
      event_sequence: input.contact ? 2 : 1,
    })),
  );
  await recordDealEvents(trx, [
    ...rows.map((row, i) => ({
      event: 'service.deal.created' as const,
      dealId: row.id,
      changedBy: placed[i]!.ctx.changedBy,
      extras: sourceExtra(placed[i]!.ctx),
      counted: true,
    })),
    ...rows.flatMap((row, i) => {
      const { ctx, input } = placed[i]!;
      return input.contact ? [{ ...contactAddedEvent(ctx, row.id, input.contact, null, true), counted: true }] : [];
    }),
  ]);
  return rows.map((row) => ({ id: row.id }));
}

export async function createDeal(trx: Trx, ctx: DealWriteContext, input: DealCreateInput, options: WriteOptions): Promise<{ id: number }> {
  const [created] = await createDeals(trx, [{ ctx, input }], options);
  return created!;
}

type Changes = Record<string, { from: unknown; to: unknown }>;

/** Field changes of a patch against the stored deal, in JSON terms for the `changes` extra. */
async function fieldChanges(trx: Trx, deal: DealRow, patch: DealUpdateInput, ownerName: string) {
  const values: DealFieldValues = {};
  const changes: Changes = {};
  if (patch.title !== undefined && patch.title !== deal.title) {
    values.title = patch.title;
    changes.title = { from: deal.title, to: patch.title };
  }
  if (patch.amount !== undefined && formatMoney(patch.amount) !== formatMoney(deal.amount)) {
    values.amount = patch.amount;
    changes.amount = { from: formatMoney(deal.amount), to: formatMoney(patch.amount) };
  }
  if (patch.currency !== undefined && patch.currency !== deal.currency.trim()) {
    values.currency = patch.currency;
    changes.currency = { from: deal.currency.trim(), to: patch.currency };
  }
  if (patch.closeDate !== undefined && patch.closeDate !== deal.close_date) {
    values.close_date = patch.closeDate;
    changes.closeDate = { from: deal.close_date, to: patch.closeDate };
  }
  if (patch.ownerId !== undefined && patch.ownerId !== deal.owner_id) {
    await assertUser(trx, patch.ownerId, ownerName);
    values.owner_id = patch.ownerId;
    changes.owner = { from: deal.owner_id, to: patch.ownerId };
  }
  if (patch.customFields !== undefined) {
    const merged = { ...deal.custom_fields, ...patch.customFields };
    if (JSON.stringify(merged) !== JSON.stringify(deal.custom_fields)) {
      values.custom_fields = merged;
      changes.customFields = { from: deal.custom_fields, to: merged };
    }
  }
  return { values, changes };
}

/**
 * Applies a patch to a locked deal: field changes → `service.deal.updated`
 * with `changes`; a different stage (or pipeline) → a stage move. Everything is
 * validated before anything is written.
 */
export async function patchLockedDeal(
  trx: Trx,
  ctx: DealWriteContext,
  deal: DealRow,
  patch: DealUpdateInput,
  options: WriteOptions,
): Promise<{ changed: boolean }> {
  const placementGiven = patch.stageId !== undefined || (patch.pipelineId !== undefined && patch.pipelineId !== deal.pipeline_id);
  const target = placementGiven ? await resolveStage(trx, patch, options.names, options.scope) : undefined;
  const { values, changes } = await fieldChanges(trx, deal, patch, options.names.owner);

  const fieldsChanged = Object.keys(changes).length > 0;
  if (fieldsChanged) {
    await updateDealFields(trx, deal.id, values);
    await recordDealEvent(trx, {
      event: 'service.deal.updated',
      dealId: deal.id,
      changedBy: ctx.changedBy,
      extras: { changes, ...sourceExtra(ctx) },
    });
  }
  const moved = target ? await moveLockedDeal(trx, ctx, deal, target) : false;
  return { changed: fieldsChanged || moved };
}

/** Deletes a locked deal; `service.deal.deleted` is recorded first, while the deal still exists. */
export async function deleteLockedDeal(trx: Trx, ctx: DealWriteContext, dealId: number): Promise<void> {
  await recordDealEvent(trx, { event: 'service.deal.deleted', dealId, changedBy: ctx.changedBy });
  await deleteDealRow(trx, dealId);
}

export async function lockDealOrFail(trx: Trx, dealId: number): Promise<DealRow> {
  const deal = await lockDeal(trx, dealId);
  if (!deal) throw new NotFoundError('Deal');
  return deal;
}
