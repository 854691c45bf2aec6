import type { StageType } from '../../db/schema.js';
import { formatMoney } from '../money.js';

/**
 * The one mapping of deal rows (snake_case, numeric strings, Dates, and the
 * strings that timestamps become inside json_agg) to the contract's JSON.
 */

type Timestamp = Date | string;

export const iso = (value: Timestamp): string => new Date(value).toISOString();
const isoOrNull = (value: Timestamp | null): string | null => (value === null ? null : iso(value));
const ref = (id: number | null, name: string | null) => (id !== null && name !== null ? { id, name } : null);

type Named = { id: number; name: string };

export interface DealSummaryRow {
  id: number;
  title: string;
  amount: string;
  currency: string;
  status: StageType;
  close_date: string | null;
  custom_fields: Record<string, unknown>;
  lost_reason: string | null;
  stage_changed_at: Timestamp;
  won_at: Timestamp | null;
  lost_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  stage: { id: number; name: string; type: StageType; position: number; probability: number } | null;
  pipeline: Named | null;
  owner: Named | null;
  created_by: Named | null;
  source: { id: string; name: string } | null;
}

export function toDealSummaryJson(row: DealSummaryRow) {
  return {
    id: row.id,
    title: row.title,
    amount: formatMoney(row.amount),
    currency: row.currency.trim(),
    status: row.status,
    closeDate: row.close_date,
    owner: row.owner,
    // Foreign keys guarantee both; the types of a json subquery cannot say so.
    pipeline: row.pipeline!,
    stage: row.stage!,
    customFields: row.custom_fields,
    source: row.source,
    lostReason: row.lost_reason,
    stageChangedAt: iso(row.stage_changed_at),
    wonAt: isoOrNull(row.won_at),
    lostAt: isoOrNull(row.lost_at),
    createdBy: row.created_by,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}

export interface MemberJsonRow {
  contact_id: number;
  role: string | null;
  is_primary: boolean;
  email: string;
  first_name: string | null;
  last_name: string | null;
  company: string | null;
  /** Set when the host deleted (or merged away) the contact: the deal still names it, marked deleted. */
  deleted_at: Timestamp | string | null;
}

export const toMemberJson = (row: MemberJsonRow) => ({
  contact_id: row.contact_id,
  role: row.role,
  is_primary: row.is_primary,
  deleted: row.deleted_at != null,
  contact: { id: row.contact_id, email: row.email, first_name: row.first_name, last_name: row.last_name, company: row.company },
});

export interface NoteJsonRow {
  id: number;
  deal_id: number;
  body: string;
  author_id: number | null;
  author_name: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export const toNoteJson = (row: NoteJsonRow) => ({
  id: row.id,
  deal: row.deal_id,
  body: row.body,
  author: ref(row.author_id, row.author_name),
  createdAt: iso(row.created_at),
  updatedAt: iso(row.updated_at),
});

export interface TaskJsonRow {
  id: number;
  deal_id: number;
  title: string;
  due_date: string | null;
  assignee_id: number | null;
  assignee_name: string | null;
  is_completed: boolean;
  completed_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export const toTaskJson = (row: TaskJsonRow) => ({
  id: row.id,
  deal: row.deal_id,
  title: row.title,
  dueDate: row.due_date,
  assignee: ref(row.assignee_id, row.assignee_name),
  isCompleted: row.is_completed,
  completedAt: isoOrNull(row.completed_at),
  createdAt: iso(row.created_at),
  updatedAt: iso(row.updated_at),
});

export type DealSummaryJson = ReturnType<typeof toDealSummaryJson>;
export type MemberJson = ReturnType<typeof toMemberJson>;
export type NoteJson = ReturnType<typeof toNoteJson>;
export type TaskJson = ReturnType<typeof toTaskJson>;
export type DealFullJson = DealSummaryJson & { contacts: MemberJson[]; notes: NoteJson[]; tasks: TaskJson[] };
