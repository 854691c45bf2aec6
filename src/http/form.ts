import { z } from 'zod';
import { list } from './schemas.js';

/**
 * A list input that can also be emptied from a form, which cannot send an
 * empty array: `roles=` or a lone `roles[]=` mean "none".
 */
export const formList = <T extends z.ZodType>(item: T, bounds?: Parameters<typeof list>[1]) =>
  z.preprocess((value) => (value === '' || (Array.isArray(value) && value.length === 1 && value[0] === '') ? [] : value), list(item, bounds));
