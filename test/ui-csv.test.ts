import { describe, expect, it } from 'vitest';
import { csvCell, csvTable } from '../src/ui/csv.js';

/** The CSV downloads' cells: RFC 4180 quoting and the spreadsheet-formula guard (OWASP "CSV injection"). */

describe('CSV cells', () => {
  it('quotes text, doubling inner quotes, and keeps commas and line breaks inside the cell', () => {
    expect(csvCell('Ann Archer')).toBe('"Ann Archer"');
    expect(csvCell('Say "hi", then\r\nleave')).toBe('"Say ""hi"", then\r\nleave"');
    expect(csvCell('')).toBe('""');
  });

  it('writes numbers bare and nothing for null', () => {
    expect(csvCell(1305.25)).toBe('1305.25');
    expect(csvCell(0)).toBe('0');
    expect(csvCell(null)).toBe('');
    expect(csvCell(undefined)).toBe('');
    expect(csvCell(Number.NaN)).toBe('');
  });

  it('defuses text a spreadsheet would run as a formula', () => {
    expect(csvCell('=1+2')).toBe(`"'=1+2"`);
    expect(csvCell('+31 20 555')).toBe(`"'+31 20 555"`);
    expect(csvCell('-2+3')).toBe(`"'-2+3"`);
    expect(csvCell('@SUM(A1:A9)')).toBe(`"'@SUM(A1:A9)"`);
    expect(csvCell('\t=cmd')).toBe(`"'\t=cmd"`);
    expect(csvCell('\r=cmd')).toBe(`"'\r=cmd"`);
    expect(csvCell('=HYPERLINK("http://x","y")')).toBe(`"'=HYPERLINK(""http://x"",""y"")"`);
    // Only the first character counts; a negative number is a number, not text.
    expect(csvCell('Bo = boss')).toBe('"Bo = boss"');
    expect(csvCell(-5)).toBe('-5');
  });

  it('joins rows with CRLF and ends with one', () => {
    expect(csvTable([['a', 1], [null, '@b']])).toBe(`"a",1\r\n,"'@b"\r\n`);
  });
});
