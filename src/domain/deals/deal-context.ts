import type { ChangedBy } from '../../events/events.js';
import type { ContactRow } from '../../host/port.js';
import type { StageRow } from '../pipelines/pipelines.repository.js';

/*
 * The shapes every deal writer shares (API services, batch, inbound), in a
 * module of their own so the writers do not import each other for them.
 */

/** Who changes a deal: an API caller ({id, name}) or an inbound source ({id: null, name} plus `source`). */
export interface DealWriteContext {
  changedBy: ChangedBy;
  source?: { id: string; name: string };
}

export interface DealCreateInput {
  title: string;
  amount?: string;
  /** ISO 4217; callers fill in DEFAULT_CURRENCY when the sender gave none. */
  currency: string;
  pipelineId?: number;
  stageId?: number;
  closeDate?: string | null;
  ownerId?: number | null;
  createdById?: number | null;
  customFields?: Record<string, unknown>;
  sourceId?: string;
  externalId?: string;
  /** The deal's first contact: it joins the new committee as its primary. */
  contact?: ContactRow;
  /**
   * The stage `pipelineId` and `stageId` resolve to, when the caller resolved
   * them already with resolveStage (the inbound batch does, beside its contact
   * lookup, to save the batch a round trip); otherwise createDeals resolves them.
   */
  stage?: StageRow;
}

export interface DealUpdateInput {
  title?: string;
  amount?: string;
  currency?: string;
  stageId?: number;
  pipelineId?: number;
  closeDate?: string | null;
  ownerId?: number | null;
  customFields?: Record<string, unknown>;
}
