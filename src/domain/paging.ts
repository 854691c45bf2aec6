/** The page envelope of list answers: `{"total","page","limit","pages"}`. */
export function pageInfo(total: number, page: number, limit: number) {
  return { total, page, limit, pages: Math.ceil(total / limit) };
}

/** A user's search text as a LIKE pattern that matches it literally, anywhere. */
export function containsPattern(search: string): string {
  return `%${search.replace(/[\\%_]/g, (char) => `\\${char}`)}%`;
}
