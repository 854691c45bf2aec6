import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import type { Db } from '../../db/database.js';
import { dispatchFromConfig, type HostPort } from '../port.js';
import { createMauticAuth } from './auth.js';
import { createMauticClient, type ServiceCredentials } from './client.js';
import { createMauticContacts } from './contacts.js';
import { createMauticUsers } from './users.js';
import { mauticWebhookRoutes } from './webhook.routes.js';

/**
 * Mautic as the host: its users log in here with their Mautic credentials, and
 * deals reference its users and contacts by Mautic id through a local copy
 * (the users and contacts tables) that is filled on first use, refreshed on
 * read once older than HOST_COPY_MAX_AGE, and updated by Mautic's webhooks.
 */
export function createMauticHost(options: { db: Db; config: Config; logger: Logger }): HostPort {
  const { db, config } = options;
  const logger = options.logger.child({ component: 'mautic' });
  const credentials: ServiceCredentials = config.MAUTIC_USERNAME && config.MAUTIC_PASSWORD
    ? { username: config.MAUTIC_USERNAME, password: config.MAUTIC_PASSWORD }
    : { clientId: config.MAUTIC_CLIENT_ID!, clientSecret: config.MAUTIC_CLIENT_SECRET! };
  const client = createMauticClient({ baseUrl: config.MAUTIC_URL!, timeoutMs: config.HOST_TIMEOUT_MS, credentials, logger });
  const maxAgeMs = () => config.HOST_COPY_MAX_AGE * 1000;
  const users = createMauticUsers({ db, client, maxAgeMs, logger });
  const contacts = createMauticContacts({ db, client, maxAgeMs });
  const refreshing = new Set<Promise<void>>();

  return {
    name: 'mautic',
    auth: createMauticAuth({ db, client, config, logger }),
    managesUsers: false,
    dispatch: dispatchFromConfig(config),
    users,
    contacts,
    refresh({ userIds, contactIds }) {
      if (userIds.length === 0 && contactIds.length === 0) return;
      // In the background: the read already answered from the copy, and a Mautic outage must not fail it.
      const run = Promise.all([users.ensure(userIds), contacts.ensure(contactIds)])
        .then(() => undefined)
        .catch((error: Error) => logger.warn({ err: { type: error.name, message: error.message } }, 'Background refresh of the Mautic copy failed'))
        .finally(() => refreshing.delete(run));
      refreshing.add(run);
    },
    routes: mauticWebhookRoutes({ db, secret: config.MAUTIC_WEBHOOK_SECRET, logger }),
    async close() {
      await Promise.all(refreshing);
    },
  };
}
