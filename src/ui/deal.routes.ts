import type { FastifyInstance } from 'fastify';
import type { UiOptions } from './index.js';

export async function dealPageRoutes(_app: FastifyInstance, _deps: UiOptions): Promise<void> {}
