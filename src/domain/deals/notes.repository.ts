import type { Executor, Trx } from '../../db/database.js';
import type { NoteJsonRow } from './deal-json.js';

/** What a note's JSON needs, from deal_notes left-joined with `users as author` (also used by the deal view). */
export const NOTE_COLUMNS = [
  'deal_notes.id',
  'deal_notes.deal_id',
  'deal_notes.body',
  'deal_notes.author_id',
  'author.name as author_name',
  'deal_notes.created_at',
  'deal_notes.updated_at',
] as const;

export function findNote(db: Executor, id: number): Promise<NoteJsonRow | undefined> {
  return db
    .selectFrom('deal_notes')
    .leftJoin('users as author', 'author.id', 'deal_notes.author_id')
    .select(NOTE_COLUMNS)
    .where('deal_notes.id', '=', id)
    .executeTakeFirst();
}

export async function insertNote(trx: Trx, note: { dealId: number; body: string; authorId: number | null }): Promise<number> {
  const row = await trx
    .insertInto('deal_notes')
    .values({ deal_id: note.dealId, body: note.body, author_id: note.authorId })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

export async function updateNoteBody(trx: Trx, id: number, body: string): Promise<void> {
  await trx.updateTable('deal_notes').set({ body, updated_at: new Date() }).where('id', '=', id).execute();
}

export async function deleteNote(trx: Trx, id: number): Promise<void> {
  await trx.deleteFrom('deal_notes').where('id', '=', id).execute();
}
