import { z } from 'zod';
import { pageQuery } from '../../http/schemas.js';

/** Pieces shared by the built-in host's route plugins. */

export const hostAdmin = { permission: 'host:admin' } as const;

export const timestamps = { createdAt: z.string(), updatedAt: z.string() };

export const searchQuery = pageQuery.extend({ search: z.string().trim().max(255).optional() });

export const pageFields = { total: z.number(), page: z.number(), limit: z.number(), pages: z.number() };
