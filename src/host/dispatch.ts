import type { Config } from '../config.js';
import type { EventDispatch } from './port.js';

/** Where events go, from WEBHOOK_MODE: every host adapter can forward to its own dispatcher. */
export function eventDispatch(config: Pick<Config, 'WEBHOOK_MODE' | 'HOST_WEBHOOK_URL' | 'HOST_WEBHOOK_SECRET'>): EventDispatch {
  return config.WEBHOOK_MODE === 'forward'
    ? { mode: 'forward', url: config.HOST_WEBHOOK_URL!, secret: config.HOST_WEBHOOK_SECRET! }
    : { mode: 'builtin' };
}
