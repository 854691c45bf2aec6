import { randomUUID } from 'node:crypto';
import { seal } from '../../crypto/secret-box.js';
import type { Db } from '../../db/database.js';
import { NotFoundError, ValidationError } from '../../http/errors.js';
import type { Actor } from '../../host/permissions.js';
import type { HostUsers } from '../../host/port.js';
import { canSeePipeline, findDefaultPipeline, findPipeline } from '../pipelines/pipelines.repository.js';
import {
  deleteSourceRow,
  findSourceRow,
  insertSource,
  listLogEntries,
  listSourceRows,
  rotateSourceSecret,
  updateSource,
  type SourceRow,
} from './inbound.repository.js';
import { generateSecret } from './inbound.signature.js';
import type { LogOutcome } from './sources.schemas.js';
import type { FieldMap } from './field-map.js';

/** Managing inbound sources (service:webhooks:manage). Secrets leave only in the create and rotate answers. */

export interface InboundDeps {
  db: Db;
  appKey: Buffer;
  baseUrl: string;
  /** The host's users: a default owner is copied locally (and checked) when it is chosen. */
  users: HostUsers;
}

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const endpointUrl = (baseUrl: string, id: string) => `${baseUrl}/service/settings/inbound-webhooks/${id}/receive`;

export function toSourceJson(row: SourceRow, baseUrl: string) {
  return {
    id: row.id,
    name: row.name,
    pipeline: { id: row.pipeline_id, name: row.pipeline_name },
    /** Where created deals start; null: the pipeline's first stage. */
    stage: row.default_stage_id === null ? null : { id: row.default_stage_id, name: row.default_stage_name! },
    /** Who owns created deals; null: nobody. */
    owner: row.default_owner_id === null ? null : { id: row.default_owner_id, name: row.default_owner_name! },
    /** Deal field → where in the sender's JSON it is read from; fields not listed are read under their own name. */
    fields: row.field_map,
    endpointUrl: endpointUrl(baseUrl, row.id),
    enabled: row.enabled,
    /** When the rotated-out secret stops working; null when there is none in its grace period. */
    previousSecretExpiresAt: row.previous_secret_valid ? new Date(row.previous_secret_expires_at!).toISOString() : null,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    lastReceivedAt: row.last_received_at ? new Date(row.last_received_at).toISOString() : null,
  };
}

export type SourceJson = ReturnType<typeof toSourceJson>;

export interface SourceInput {
  name?: string;
  pipeline?: number;
  /** null: the pipeline's first stage. */
  stage?: number | null;
  /** null: no owner. */
  owner?: number | null;
  /** Replaces the whole mapping; {} reads every field under its own name. */
  fields?: FieldMap;
  enabled?: boolean;
}

async function sourceOrFail(db: Db, id: string): Promise<SourceRow> {
  const row = UUID.test(id) ? await findSourceRow(db, id) : undefined;
  if (!row) throw new NotFoundError('Inbound source');
  return row;
}

/** A pipeline the manager may route deals into; one they cannot see is reported as unknown. */
async function usablePipeline(db: Db, actor: Actor, id: number | undefined): Promise<number> {
  const pipeline = id === undefined ? await findDefaultPipeline(db) : await findPipeline(db, id);
  if (!pipeline || !(await canSeePipeline(db, actor, pipeline.id))) {
    throw ValidationError.field('source[pipeline]', id === undefined ? 'Required: there is no default pipeline' : 'Unknown pipeline');
  }
  return pipeline.id;
}

/** A stage of the source's pipeline (or null); a stage of another pipeline is refused. */
async function usableStage(db: Db, pipelineId: number, stageId: number | null): Promise<number | null> {
  if (stageId === null) return null;
  const stage = await db.selectFrom('stages').select('id').where('id', '=', stageId).where('pipeline_id', '=', pipelineId).executeTakeFirst();
  if (!stage) throw ValidationError.field('source[stage]', 'Not a stage of the chosen pipeline');
  return stage.id;
}

/** An active user of the host (copied locally first), or null. */
async function usableOwner(deps: InboundDeps, ownerId: number | null): Promise<number | null> {
  if (ownerId === null) return null;
  await deps.users.ensure([ownerId]);
  const user = await deps.db.selectFrom('users').select('id').where('id', '=', ownerId).where('is_active', '=', true).executeTakeFirst();
  if (!user) throw ValidationError.field('source[owner]', 'Unknown user');
  return user.id;
}

export async function listSources(deps: InboundDeps): Promise<SourceJson[]> {
  return (await listSourceRows(deps.db)).map((row) => toSourceJson(row, deps.baseUrl));
}

export async function getSource(deps: InboundDeps, id: string): Promise<SourceJson> {
  return toSourceJson(await sourceOrFail(deps.db, id), deps.baseUrl);
}

export async function createSource(
  deps: InboundDeps,
  actor: Actor,
  input: SourceInput & { name: string },
): Promise<SourceJson & { secret: string }> {
  const pipelineId = await usablePipeline(deps.db, actor, input.pipeline);
  const stageId = await usableStage(deps.db, pipelineId, input.stage ?? null);
  const ownerId = await usableOwner(deps, input.owner ?? null);
  const id = randomUUID();
  const secret = generateSecret();
  await insertSource(deps.db, {
    id,
    name: input.name,
    pipelineId,
    stageId,
    ownerId,
    fieldMap: input.fields ?? {},
    secretEncrypted: seal(deps.appKey, secret),
    enabled: input.enabled ?? true,
    createdById: actor.id,
  });
  return { ...(await getSource(deps, id)), secret };
}

export async function editSource(deps: InboundDeps, actor: Actor, id: string, input: SourceInput): Promise<SourceJson> {
  const current = await sourceOrFail(deps.db, id);
  const pipelineId =
    input.pipeline !== undefined && input.pipeline !== current.pipeline_id ? await usablePipeline(deps.db, actor, input.pipeline) : undefined;
  // A new pipeline without a stage of its own starts deals in its first stage: the old default belongs to the old pipeline.
  const stageId =
    input.stage !== undefined
      ? await usableStage(deps.db, pipelineId ?? current.pipeline_id, input.stage)
      : pipelineId !== undefined && current.default_stage_id !== null
        ? null
        : undefined;
  const ownerId = input.owner !== undefined ? await usableOwner(deps, input.owner) : undefined;
  if (!(await updateSource(deps.db, id, { name: input.name, pipelineId, stageId, ownerId, fieldMap: input.fields, enabled: input.enabled }))) {
    throw new NotFoundError('Inbound source');
  }
  return getSource(deps, id);
}

export async function deleteSource(deps: InboundDeps, id: string): Promise<void> {
  if (!UUID.test(id) || !(await deleteSourceRow(deps.db, id))) throw new NotFoundError('Inbound source');
}

/** A new secret, shown once; the one it replaces keeps working for 24 hours. */
export async function rotateSecret(deps: InboundDeps, id: string): Promise<SourceJson & { secret: string }> {
  const secret = generateSecret();
  if (!UUID.test(id) || !(await rotateSourceSecret(deps.db, id, seal(deps.appKey, secret)))) throw new NotFoundError('Inbound source');
  return { ...(await getSource(deps, id)), secret };
}

/** The newest receives of a source, optionally only those of one outcome. */
export async function sourceLog(deps: InboundDeps, id: string, limit: number, outcome?: LogOutcome) {
  await sourceOrFail(deps.db, id);
  const entries = await listLogEntries(deps.db, id, limit, outcome);
  return entries.map((entry) => ({
    id: entry.id,
    receivedAt: entry.received_at.toISOString(),
    status: entry.status,
    outcome: entry.outcome,
    error: entry.error,
    deal: entry.deal_id === null ? null : { id: entry.deal_id },
  }));
}
