import type { Db } from '../../db/database.js';
import { ConflictError, NotFoundError } from '../../http/errors.js';
import {
  deleteContact,
  findContactByEmail,
  findContactDetail,
  insertContact,
  listContacts,
  updateContact,
  type ContactDetailRow,
  type ContactValues,
} from './contacts.repository.js';
import { pageInfo } from '../../domain/paging.js';

export const toContactJson = (row: ContactDetailRow) => ({
  id: row.id,
  email: row.email,
  first_name: row.first_name,
  last_name: row.last_name,
  company: row.company,
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
});

export type ContactJson = ReturnType<typeof toContactJson>;

const duplicate = () => new ConflictError('A contact with this email already exists', { field: 'email' });

export async function getContacts(db: Db, query: { search?: string; page: number; limit: number }) {
  const { rows, total } = await listContacts(db, query);
  return { ...pageInfo(total, query.page, query.limit), contacts: rows.map(toContactJson) };
}

export async function getContact(db: Db, id: number): Promise<ContactJson> {
  const row = await findContactDetail(db, id);
  if (!row) throw new NotFoundError('Contact');
  return toContactJson(row);
}

// The unique index on lower(email) still decides a race; its 23505 is a 409 too.
export async function createContact(db: Db, values: ContactValues & { email: string }): Promise<ContactJson> {
  if (await findContactByEmail(db, values.email)) throw duplicate();
  return toContactJson(await insertContact(db, values));
}

export async function editContact(db: Db, id: number, values: ContactValues): Promise<ContactJson> {
  if (values.email !== undefined) {
    const other = await findContactByEmail(db, values.email);
    if (other && other.id !== id) throw duplicate();
  }
  const row = await updateContact(db, id, values);
  if (!row) throw new NotFoundError('Contact');
  return toContactJson(row);
}

export async function removeContact(db: Db, id: number): Promise<void> {
  if (!(await deleteContact(db, id))) throw new NotFoundError('Contact');
}
