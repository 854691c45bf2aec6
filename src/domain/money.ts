/**
 * Money is NUMERIC(15,2) in PostgreSQL and a decimal string in between; it
 * becomes a JSON number only at the edge. 15 significant digits round-trip
 * exactly through a double, so the number printed is the number stored.
 */
export function formatMoney(value: string | number): number {
  return Number(value);
}
