/**
 * CSV for downloads (RFC 4180): every text cell quoted with inner quotes
 * doubled, numbers as written by JavaScript, empty for null. A text cell that a
 * spreadsheet would read as a formula (starting with = + - @, or a tab or
 * carriage return that some strip before looking) gets a leading apostrophe,
 * so a user-chosen name cannot run as a formula when the file is opened
 * (OWASP "CSV injection").
 */

export type CsvCell = string | number | null | undefined;

const FORMULA_START = /^[=+\-@\t\r]/;

export function csvCell(value: CsvCell): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : '';
  const text = FORMULA_START.test(value) ? `'${value}` : value;
  return `"${text.replace(/"/g, '""')}"`;
}

/** Lines end in CRLF, as RFC 4180 and spreadsheets expect. */
export function csvTable(rows: CsvCell[][]): string {
  return rows.map((row) => row.map(csvCell).join(',')).join('\r\n') + '\r\n';
}
