import { beforeAll, describe, expect, it } from 'vitest';
import { setupApp, type TestContext } from './helpers/app.js';
import { createDeal, createUser } from './helpers/factories.js';

/** Inputs that must never come back able to run script. */
const XSS_VECTORS = [
  '<script>alert(1)</script>',
  '<SCRIPT SRC=//evil.test/x.js></SCRIPT>',
  '<img src=x onerror=alert(1)>',
  '<p onclick="alert(1)">click</p>',
  '<body onload=alert(1)>',
  '<a href="javascript:alert(1)">x</a>',
  '<a href="JaVaScRiPt:alert(1)">x</a>',
  '<a href="&#106;avascript:alert(1)">x</a>',
  '<a href=" javascript:alert(1)">x</a>',
  '<a href="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==">x</a>',
  '<a href="vbscript:msgbox(1)">x</a>',
  '<svg onload=alert(1)><circle r="1"/></svg>',
  '<svg><script>alert(1)</script></svg>',
  '<math><mi xlink:href="javascript:alert(1)">x</mi></math>',
  '<style>@import "//evil.test/x.css";</style>',
  '<p style="background:url(javascript:alert(1))">styled</p>',
  '<div style="width: expression(alert(1))">ie</div>',
  '<iframe src="javascript:alert(1)"></iframe>',
  '<object data="javascript:alert(1)"></object>',
  '<embed src="javascript:alert(1)">',
  '<form action="javascript:alert(1)"><button>go</button></form>',
  '<meta http-equiv="refresh" content="0;url=javascript:alert(1)">',
  '<base href="javascript:alert(1)//">',
  '<input autofocus onfocus=alert(1)>',
  '<details open ontoggle=alert(1)>',
  '<a href="https://ok.test" onmouseover="alert(1)">hover</a>',
  '<scr<script>ipt>alert(1)</script>',
  '<<script>script>alert(1)<</script>/script>',
];

const DANGEROUS = [/<script/i, /\son\w+\s*=/i, /javascript:/i, /vbscript:/i, /data:/i, /<svg/i, /<style/i, /style=/i, /<iframe/i, /<object/i, /<embed/i, /<form/i, /<meta/i, /<base/i, /<input/i, /<math/i, /<img/i];

describe('notes', () => {
  it('stores sanitized HTML with its author, keeping allowed formatting and safe links', async () => {
    const t = await setupApp();
    const author = await createUser(t.db, ['service:deals:editown', 'service:deals:viewown'], { name: 'Nora Notes' });
    const { id } = await createDeal(t.db, { ownerId: author.id });
    const res = await t.call(
      {
        method: 'POST',
        url: `/service/${id}/notes`,
        payload: 'note[body]=<p>Called <strong>Ann</strong>, see <a href="https://acme.test/q">quote</a></p><script>x()</script>',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      },
      author,
    );
    expect(res.statusCode).toBe(200);
    const note = res.json().note;
    expect(note).toMatchObject({
      deal: id,
      body: '<p>Called <strong>Ann</strong>, see <a href="https://acme.test/q" rel="noopener noreferrer nofollow" target="_blank">quote</a></p>',
      author: { id: author.id, name: 'Nora Notes' },
    });
    expect(res.headers.location).toBe(`http://service.test/service/notes/${note.id}`);
    const stored = await t.db.selectFrom('deal_notes').select(['body', 'author_id']).where('id', '=', note.id).executeTakeFirstOrThrow();
    expect(stored).toEqual({ body: note.body, author_id: author.id });
    expect((await t.call({ method: 'GET', url: `/service/notes/${note.id}` }, author)).json().note).toEqual(note);
  });

  it('refuses a body that is empty after sanitizing with 422', async () => {
    const t = await setupApp();
    const { id } = await createDeal(t.db);
    for (const body of ['<script>alert(1)</script>', '<p>&nbsp; </p>', '<img src=x onerror=alert(1)>', '']) {
      const res = await t.call({ method: 'POST', url: `/service/${id}/notes`, payload: { note: { body } } });
      expect(res.statusCode, body).toBe(422);
      expect(res.json().errors[0].details).toHaveProperty('note[body]');
    }
    expect(await t.db.selectFrom('deal_notes').select('id').execute()).toEqual([]);
  });

  it('edits (sanitized again) and deletes a note', async () => {
    const t = await setupApp();
    const { id } = await createDeal(t.db);
    const note = (await t.call({ method: 'POST', url: `/service/${id}/notes`, payload: { note: { body: 'first' } } })).json().note;
    const edited = await t.call({ method: 'POST', url: `/service/notes/${note.id}/edit`, payload: { note: { body: '<em>second</em><img src=x onerror=y>' } } });
    expect(edited.json().note).toMatchObject({ id: note.id, body: '<em>second</em>' });
    const patched = await t.call({ method: 'PATCH', url: `/service/notes/${note.id}`, payload: { note: { body: 'third' } } });
    expect(patched.json().note.body).toBe('third');
    expect((await t.call({ method: 'DELETE', url: `/service/notes/${note.id}` })).json()).toEqual({ success: true });
    expect((await t.call({ method: 'GET', url: `/service/notes/${note.id}` })).statusCode).toBe(404);
    expect((await t.call({ method: 'POST', url: `/service/notes/${note.id}/delete` })).statusCode).toBe(404);
  });
});

describe('note sanitization against XSS vectors', () => {
  let t: TestContext;
  let dealId: number;
  beforeAll(async () => {
    t = await setupApp();
    dealId = (await createDeal(t.db)).id;
  });

  it.each(XSS_VECTORS)('neutralizes %s', async (vector) => {
    const res = await t.call({ method: 'POST', url: `/service/${dealId}/notes`, payload: { note: { body: `${vector}<p>safe text</p>` } } });
    expect(res.statusCode).toBe(200);
    const body: string = res.json().note.body;
    for (const pattern of DANGEROUS) expect(body, `${pattern} in ${body}`).not.toMatch(pattern);
    expect(body).toContain('<p>safe text</p>');
  });
});
