import type { Config } from '../../config.js';
import type { Db } from '../../db/database.js';
import { dispatchFromConfig, type HostPort } from '../port.js';
import { createBuiltinAuth } from './auth.js';
import { findOrCreateContactsByEmail, listContacts } from './contacts.repository.js';
import { hostRoutes } from './routes/index.js';
import { oauthRoutes } from './routes/oauth.routes.js';
import { settingsUserRoutes } from './pages/settings-users.routes.js';
import { listUsers } from './users.repository.js';

export { bootstrap, type BootstrapResult } from './bootstrap.js';

/**
 * The standalone host on our own tables: users, roles, contacts and API
 * credentials are managed under /host/*, so the local tables are the host and
 * there is never anything to fetch or refresh.
 */
export function createBuiltinHost(options: { db: Db; config: Config }): HostPort {
  const { db, config } = options;
  const auth = createBuiltinAuth(db);
  return {
    name: 'builtin',
    auth,
    managesUsers: true,
    dispatch: dispatchFromConfig(config),
    users: {
      async ensure() {},
      async search({ search, limit }) {
        const { rows } = await listUsers(db, { search, page: 1, limit, activeOnly: true });
        return rows.map((row) => ({ id: row.id, name: row.name, email: row.email }));
      },
    },
    contacts: {
      async ensure() {},
      async search({ search, limit }) {
        const { rows } = await listContacts(db, { search, page: 1, limit });
        return rows.map(({ id, email, first_name, last_name, company }) => ({ id, email, first_name, last_name, company }));
      },
      findOrCreateByEmail: (wanted) => findOrCreateContactsByEmail(db, wanted),
    },
    refresh() {},
    async routes(app, { baseUrl, forgetLogins }) {
      await app.register(oauthRoutes, { db, auth, baseUrl, forgetLogins });
      await app.register(hostRoutes, { db, auth, baseUrl, forgetLogins });
    },
    pages: settingsUserRoutes,
  };
}
