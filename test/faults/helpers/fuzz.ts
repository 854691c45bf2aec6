/**
 * Seeded generators of bad input (no fast-check in the dependencies: a
 * mulberry32 PRNG, so a failing run is replayed with FAULT_SEED=<seed>).
 */

export type Random = () => number;

export function mulberry32(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const pick = <T>(random: Random, items: readonly T[]): T => items[Math.floor(random() * items.length)]!;

const deepArray = (depth: number): unknown => (depth === 0 ? 1 : [deepArray(depth - 1)]);
const deepObject = (depth: number): unknown => (depth === 0 ? 'x' : { a: deepObject(depth - 1) });

/** Values of the wrong type, out of range, odd text. */
export function badValue(random: Random): unknown {
  const choices: (() => unknown)[] = [
    () => null,
    () => true,
    () => [],
    () => ({}),
    () => [1, 'two', null],
    () => ({ nested: { deeper: ['x'] } }),
    () => -1,
    () => 0,
    () => -(2 ** 53),
    () => 2 ** 64,
    () => 1e308,
    () => -1e308,
    () => 0.000001,
    () => '1e400',
    () => 'NaN',
    () => '-0',
    () => '99999999999999999999999999',
    () => '',
    () => ' ',
    () => 'x'.repeat(5000 + Math.floor(random() * 20_000)),
    () => '😀'.repeat(300),
    () => '\u202Eevil\u200B\u0301\uFEFF',
    () => '\uD800', // a lone surrogate
    () => '\uFFFF\uFFFE',
    () => "'; drop table deals; --",
    () => '<script>alert(1)</script>',
    () => '2026-02-30',
    () => '../../etc/passwd',
    () => '%00',
    () => deepArray(40),
    () => deepObject(40),
    () => Array.from({ length: 5000 }, (_, i) => i),
  ];
  return pick(random, choices)();
}

/** JSON text with keys that would reach Object.prototype if anything merged them naively. */
export function prototypeJson(random: Random, keys: string[]): string {
  const key = pick(random, keys.length > 0 ? keys : ['deal']);
  const poison = pick(random, ['__proto__', 'constructor', 'prototype']);
  return pick(random, [
    `{"__proto__":{"isAdmin":true},"${key}":{"__proto__":{"polluted":1}}}`,
    `{"constructor":{"prototype":{"polluted":1}},"${key}":"x"}`,
    `{"${key}":{"${poison}":{"title":"x"},"constructor":"x"}}`,
    `{"${poison}":[1,2,3]}`,
  ]);
}

/** Form bodies: deep brackets, prototype keys, repeated and empty names. */
export function badForm(random: Random, keys: string[]): string {
  const key = pick(random, keys.length > 0 ? keys : ['deal']);
  return pick(random, [
    `${key}${'[a]'.repeat(200)}=1`,
    `${key}${'['.repeat(300)}=1`,
    `${key}[__proto__][polluted]=1&__proto__[x]=1`,
    `constructor[prototype][polluted]=1&${key}=x`,
    `${key}[]=1&${key}[]=2&${key}[x]=3`,
    `${key}=${encodeURIComponent('😀'.repeat(100))}&=&&==`,
    `${key}[${'9'.repeat(30)}]=1`,
    `${key}=%ZZ%00`,
  ]);
}

/** Body text that is not what its content type says, or too large. */
export function badRaw(random: Random): { body: string; contentType?: string } {
  return pick(random, [
    { body: '{"deal":', contentType: 'application/json' },
    { body: '[1,2,3]', contentType: 'application/json' },
    { body: '"just a string"', contentType: 'application/json' },
    { body: 'null', contentType: 'application/json' },
    { body: `${'['.repeat(5000)}${']'.repeat(5000)}`, contentType: 'application/json' },
    { body: `{"x":"${'a'.repeat(2 * 1024 * 1024)}"}`, contentType: 'application/json' },
    { body: '<deal><title>x</title></deal>', contentType: 'application/xml' },
    { body: 'title=x', contentType: 'text/plain' },
    { body: '--b\r\nContent-Disposition: form-data; name="x"\r\n\r\n1\r\n--b--', contentType: 'multipart/form-data; boundary=b' },
    { body: '{"deal":{"title":"x"}}', contentType: 'application/json; charset=utf-16' },
    { body: '{"deal":{"title":"x"}}' },
    { body: '\u0000\u0001\u0002', contentType: 'application/octet-stream' },
  ]);
}

/** Values for a path parameter: ids that name nothing or are not ids. */
export function badPathValue(random: Random): string {
  return pick(random, ['0', '-1', '99999999', '9'.repeat(40), 'abc', '1.5', '%00', '%F0%9F%98%80', '__proto__', 'constructor', '1e3', ' 1', '0x10']);
}
