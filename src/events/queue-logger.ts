import { Logger as QueueLogger } from 'graphile-worker';
import type { Logger } from 'pino';

/** graphile-worker logs through pino like the rest of the service. */
export function queueLogger(logger: Logger): QueueLogger {
  const child = logger.child({ component: 'queue' });
  return new QueueLogger(() => (level, message, meta) => {
    const method = level === 'error' ? 'error' : level === 'warning' ? 'warn' : 'debug';
    child[method](meta ?? {}, message);
  });
}
