import { Parser } from 'htmlparser2';

// Content a reader never sees, so it must not be indexed either.
const HIDDEN = new Set(['script', 'style', 'noscript', 'template', 'head', 'title', 'iframe', 'object', 'svg', 'math']);

// Tags that separate words when rendered; without a break "<p>a</p><p>b</p>" would index "ab".
const BREAKS = new Set([
  'address', 'article', 'aside', 'blockquote', 'br', 'dd', 'div', 'dl', 'dt', 'figcaption', 'figure',
  'footer', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'header', 'hr', 'li', 'main', 'nav', 'ol', 'p', 'pre',
  'section', 'table', 'td', 'th', 'tr', 'ul',
]);

/**
 * Plain text of an HTML fragment: tags dropped, entities decoded, whitespace collapsed.
 * htmlparser2's tokenizer, rather than regular expressions, so that a ">" inside an attribute,
 * an unclosed tag or a script's body cannot leak markup or code into the index.
 */
export function htmlToText(html: string): string {
  const parts: string[] = [];
  let hiddenDepth = 0;
  const parser = new Parser(
    {
      onopentag(name) {
        if (HIDDEN.has(name)) hiddenDepth++;
        else if (BREAKS.has(name)) parts.push(' ');
      },
      onclosetag(name) {
        if (HIDDEN.has(name)) hiddenDepth = Math.max(0, hiddenDepth - 1);
        else if (BREAKS.has(name)) parts.push(' ');
      },
      ontext(text) {
        if (hiddenDepth === 0) parts.push(text);
      },
    },
    { decodeEntities: true, lowerCaseTags: true },
  );
  parser.end(html);
  return collapse(parts.join(''));
}

/** Text that is already plain (an RSS title, an Atom text construct): only whitespace is tidied. */
export function collapse(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
