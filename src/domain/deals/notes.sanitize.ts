import sanitizeHtml from 'sanitize-html';

/**
 * Note bodies keep simple formatting and plain links, nothing that runs:
 * every tag and attribute not listed here is dropped, script/style contents
 * vanish with their tags, and links may only be http(s) or mailto.
 */
const NOTE_HTML: sanitizeHtml.IOptions = {
  allowedTags: ['p', 'br', 'b', 'strong', 'i', 'em', 'u', 's', 'ul', 'ol', 'li', 'a', 'blockquote', 'code', 'pre', 'h1', 'h2', 'h3', 'h4'],
  allowedAttributes: { a: ['href', 'title', 'rel', 'target'] },
  allowedSchemes: ['http', 'https', 'mailto'],
  allowedSchemesAppliedToAttributes: ['href'],
  allowProtocolRelative: false,
  disallowedTagsMode: 'discard',
  nonTextTags: ['script', 'style', 'textarea', 'option', 'noscript', 'title', 'template', 'iframe', 'object', 'svg', 'math'],
  // Links open elsewhere and give the target no handle on this page.
  transformTags: { a: sanitizeHtml.simpleTransform('a', { rel: 'noopener noreferrer nofollow', target: '_blank' }) },
};

const TEXT_ONLY: sanitizeHtml.IOptions = { allowedTags: [], allowedAttributes: {} };

/** The stored form of a note body, or null when nothing visible is left. */
export function sanitizeNote(body: string): string | null {
  const clean = sanitizeHtml(body, NOTE_HTML).trim();
  const visible = sanitizeHtml(clean, TEXT_ONLY).replace(/&nbsp;|\s/g, '');
  return visible ? clean : null;
}
