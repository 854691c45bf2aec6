import type { Logger } from 'pino';
import type { Db } from '../../db/database.js';
import { upsertUsers, usersToFetch } from '../local-copy.js';
import type { HostUser, HostUsers } from '../port.js';
import { listOf, type MauticClient } from './client.js';

export function toHostUser(user: any): HostUser & { username: string } {
  const name = [user.firstName, user.lastName].filter((part) => typeof part === 'string' && part.trim()).join(' ');
  return { id: user.id, username: String(user.username ?? user.id), name: name || String(user.username ?? user.id), email: user.email ?? null };
}

/** Mautic's users, read through the service's own credentials and copied locally when deals name them. */
export function createMauticUsers(options: { db: Db; client: MauticClient; maxAgeMs: () => number; logger: Logger }): HostUsers {
  const { db, client } = options;
  return {
    async ensure(ids) {
      const wanted = await usersToFetch(db, ids, options.maxAgeMs());
      const found: (HostUser & { username: string })[] = [];
      for (const id of wanted) {
        const answer = await client.service('GET', `/api/users/${id}`);
        // An unknown id is left out: the domain's own check then refuses the reference.
        if (answer.status === 200 && answer.body?.user) found.push(toHostUser(answer.body.user));
      }
      await upsertUsers(db, found);
    },
    async search({ search, limit }) {
      const query = new URLSearchParams({ limit: String(limit), minimal: '1' });
      if (search) query.set('search', search);
      const answer = await client.service('GET', `/api/users?${query}`);
      if (answer.status !== 200) return [];
      const users = listOf(answer.body?.users)
        .filter((user) => user?.isPublished !== false)
        .map(toHostUser);
      await upsertUsers(db, users);
      return users.map(({ id, name, email }) => ({ id, name, email }));
    },
  };
}
