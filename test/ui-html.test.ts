import { describe, expect, it } from 'vitest';
import { html, raw } from '../src/ui/html.js';
import { safeNext } from '../src/ui/login.routes.js';
import { prefersHtml } from '../src/http/session.js';
import type { FastifyRequest } from 'fastify';

/** The page builder's escaping, the login's return path, and Accept negotiation. */

describe('html builder', () => {
  it('escapes every interpolation in text and quoted attributes, unless raw or already built', () => {
    const title = `"><script>alert(1)</script><img src=x onerror='alert(2)'>\``;
    const out = html`<a title="${title}">${title}</a>${raw('<b>kept</b>')}${html`<i>${'<u>'}</i>`}`.value;
    expect(out).toBe(
      '<a title="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=&#39;alert(2)&#39;&gt;&#96;">' +
        '&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=&#39;alert(2)&#39;&gt;&#96;</a><b>kept</b><i>&lt;u&gt;</i>',
    );
  });

  it('joins arrays and prints nothing for null, undefined and false', () => {
    expect(html`${['<a>', html`<b></b>`]}${null}${undefined}${false}${0}`.value).toBe('&lt;a&gt;<b></b>0');
  });
});

describe('login return path', () => {
  it('keeps local paths and drops everything else', () => {
    expect(safeNext('/service/3/view', '')).toBe('/service/3/view');
    for (const bad of ['//evil.example', 'https://evil.example', '/\\evil', '/service/login?next=x', 'service/board', 42]) {
      expect(safeNext(bad, ''), String(bad)).toBe('/service/board');
    }
    expect(safeNext('/deals/service/board', '/deals')).toBe('/deals/service/board');
    expect(safeNext('/other', '/deals')).toBe('/deals/service/board');
  });
});

describe('Accept negotiation', () => {
  const accepts = (accept?: string) => prefersHtml({ headers: { accept } } as FastifyRequest);
  it('prefers HTML only when the client names it at least as high as JSON', () => {
    expect(accepts('text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8')).toBe(true);
    expect(accepts('*/*')).toBe(false);
    expect(accepts(undefined)).toBe(false);
    expect(accepts('application/json')).toBe(false);
    expect(accepts('application/json, text/html;q=0.5')).toBe(false);
    expect(accepts('text/html;q=0')).toBe(false);
  });
});
