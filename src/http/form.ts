import { z } from 'zod';
import { list } from './schemas.js';

/**
 * A list input that can also be emptied from a form, which cannot send an
 * empty array: `roles=` or a lone `roles[]=` mean "none".
 */
export const formList = <T extends z.ZodType>(item: T) =>
  z.preprocess((value) => (value === '' || (Array.isArray(value) && value.length === 1 && value[0] === '') ? [] : value), list(item));
