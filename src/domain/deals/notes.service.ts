import type { Db, Trx } from '../../db/database.js';
import { recordDealEvent } from '../../events/events.js';
import { NotFoundError, ValidationError } from '../../http/errors.js';
import type { Actor } from '../../host/permissions.js';
import { actorContext, assertCanViewDeal, lockDealFor } from './deal-access.js';
import { toNoteJson, type NoteJson } from './deal-json.js';
import { deleteNote as deleteNoteRow, findNote, insertNote, updateNoteBody } from './notes.repository.js';
import { sanitizeNote } from './notes.sanitize.js';

/** Notes on a deal: sanitized HTML, author recorded; writes need edit permission on the deal. */

function cleanBody(body: string): string {
  const clean = sanitizeNote(body);
  if (clean === null) throw ValidationError.field('note[body]', 'Nothing is left after removing disallowed HTML');
  return clean;
}

/** The note, with its deal locked and the caller's edit permission checked. */
async function lockNoteFor(trx: Trx, actor: Actor, noteId: number) {
  const note = await findNote(trx, noteId);
  if (!note) throw new NotFoundError('Note');
  await lockDealFor(trx, actor, note.deal_id, 'edit');
  return note;
}

export async function addNote(db: Db, actor: Actor, dealId: number, body: string): Promise<NoteJson> {
  const clean = cleanBody(body);
  return db.transaction().execute(async (trx) => {
    await lockDealFor(trx, actor, dealId, 'edit');
    const note = toNoteJson((await findNote(trx, await insertNote(trx, { dealId, body: clean, authorId: actor.id })))!);
    const { deal: _deal, ...extra } = note;
    await recordDealEvent(trx, { event: 'service.deal.note_added', dealId, changedBy: actorContext(actor).changedBy, extras: { note: extra } });
    return note;
  });
}

export async function getNote(db: Db, actor: Actor, noteId: number): Promise<NoteJson> {
  const note = await findNote(db, noteId);
  if (!note) throw new NotFoundError('Note');
  await assertCanViewDeal(db, actor, note.deal_id);
  return toNoteJson(note);
}

export async function editNote(db: Db, actor: Actor, noteId: number, body: string): Promise<NoteJson> {
  const clean = cleanBody(body);
  return db.transaction().execute(async (trx) => {
    await lockNoteFor(trx, actor, noteId);
    await updateNoteBody(trx, noteId, clean);
    return toNoteJson((await findNote(trx, noteId))!);
  });
}

export async function deleteNote(db: Db, actor: Actor, noteId: number): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await lockNoteFor(trx, actor, noteId);
    await deleteNoteRow(trx, noteId);
  });
}
