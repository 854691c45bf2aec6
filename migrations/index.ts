import type { Migration } from 'kysely';
import * as core from './20261121_2100_core.js';

/**
 * Every migration, by name in order of time. Listed statically so that the same
 * code runs under tsx, vitest and a compiled build. Add new files here; never
 * edit one that has landed.
 */
export const migrations: Record<string, Migration> = {
  '20261121_2100_core': core,
};
