import { z } from 'zod';
import { list } from './schemas.js';

/**
 * A list input that can also be emptied from a form, which cannot send an
 * empty array: `roles=` or a lone `roles[]=` mean "none", and an empty entry
 * beside checked boxes (a form's hidden `roles[]=`, which makes a group with
 * nothing checked arrive at all) is dropped.
 */
export const formList = <T extends z.ZodType>(item: T, bounds?: Parameters<typeof list>[1]) =>
  z.preprocess((value) => (value === '' ? [] : Array.isArray(value) ? value.filter((entry) => entry !== '') : value), list(item, bounds));
