import { afterAll } from 'vitest';
import type { Config } from '../../src/config.js';
import type { Db } from '../../src/db/database.js';
import { upsertContacts, upsertUsers } from '../../src/host/local-copy.js';
import { ADMIN_ROLE, doubleUser, startMauticDouble, type MauticDouble } from '../mautic-double/index.js';

/**
 * TEST_HOST=mautic runs the deal, committee and inbound tests against the
 * Mautic adapter and the contract double. Factories then create people where
 * that host keeps them: in the double, and in the local copy as the adapter
 * would after first use.
 */
export const testHost = process.env.TEST_HOST === 'mautic' ? 'mautic' : 'builtin';

let double: Promise<MauticDouble> | undefined;
const configs: Config[] = [];

/** One double per test file (vitest isolates files), with the admin as a Mautic administrator. */
export function mauticDouble(admin: { username: string; password: string }): Promise<MauticDouble> {
  if (!double) {
    double = startMauticDouble({ users: [doubleUser(1, admin.username, admin.password, ADMIN_ROLE, 'Administrator')] });
    const started = double;
    // Registered once, from the first test that needs it: closes after the file's last test.
    afterAll(async () => (await started).close());
  }
  return double;
}

export function registerConfig(config: Config): void {
  configs.push(config);
}

/** A user created by a test: a Mautic user whose role name maps to the test's own role. */
export async function createMauticUser(db: Db, user: { username: string; password: string; name: string; roleId: number; roleName: string }): Promise<number> {
  const mautic = await double!;
  const id = Math.max(0, ...mautic.state.users.keys()) + 1;
  mautic.state.users.set(id, { ...doubleUser(id, user.username, user.password, { id: 100 + user.roleId, name: user.roleName, isAdmin: false }, user.name) });
  for (const config of configs) config.MAUTIC_ROLE_MAP[user.roleName] = user.roleName;
  await upsertUsers(db, [{ id, username: user.username, name: user.name, email: `${user.username}@mautic.test` }]);
  return id;
}

export async function createMauticContact(db: Db, values: { email: string; first_name: string; last_name: string; company: string }): Promise<{ id: number; email: string }> {
  const mautic = await double!;
  const contact = mautic.addContact({ email: values.email, firstname: values.first_name, lastname: values.last_name, company: values.company });
  await upsertContacts(db, [{ id: contact.id, ...values }]);
  return { id: contact.id, email: contact.email };
}
