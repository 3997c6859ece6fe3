/**
 * Remote images in the model's answers are never fetched on their own: an image URL can carry data out
 * (a model steered by a hostile file can put a secret in it). After JupyterLab's sanitizer has run, each
 * <img> becomes a link the user can click to open it unless it loads from the page itself: an inline
 * data:image/ URI, or a URL that resolves to the page's own origin. An <img> with a srcset is always a link.
 *
 * Whether a URL is remote is decided by the browser's own parser (`new URL(src, base)`, the WHATWG URL
 * standard), never by a prefix: `https:HOST/x`, `\\HOST/x`, `/\HOST/x`, a tab inside the scheme and mixed
 * case all resolve to HOST. nbagent/render/markdown.py has the same rule in Python.
 *
 * The same sanitiser shows the hidden characters of the answers' text (bidi overrides, zero-width and
 * control characters, line separators) as marked <U+202E>, as the notebook's views do.
 */
import type { IRenderMime } from '@jupyterlab/rendermime';

import { codePoint, HIDDEN } from './hiddenChars';

const IMG = /<img\b[^>]*>/gi;

/** The value of one attribute of a sanitised tag (the sanitiser writes them double-quoted). */
function attribute(tag: string, name: string): string | null {
  const match = new RegExp(`\\s${name}="([^"]*)"`, 'i').exec(tag);
  return match ? match[1] : null;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", tab: '\t', newline: '\n' };

/** An attribute's text as the browser reads it: character references decoded. */
export function decodeAttribute(value: string): string {
  return value.replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);?/gi, (whole, ref: string) => {
    if (ref[0] === '#') {
      const code = ref[1] === 'x' || ref[1] === 'X' ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
      return Number.isFinite(code) && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return ENTITIES[ref.toLowerCase()] ?? whole;
  });
}

/** The page the panel is on: images that resolve to its origin load. */
function pageUrl(): string {
  return typeof document !== 'undefined' ? document.baseURI : 'http://localhost/';
}

function parse(src: string, base: string): URL | null {
  try {
    return new URL(src, base);
  } catch {
    return null;
  }
}

/** True when an <img> with this (decoded) ``src`` would load from anywhere but the page ``base`` itself. */
export function isRemote(src: string, base: string = pageUrl()): boolean {
  const url = parse(src, base);
  if (url === null) {
    return true; // what cannot be parsed is not shown as an image
  }
  if (url.protocol === 'data:') {
    return !/^data:\s*image\//i.test(url.href);
  }
  return url.origin !== new URL(base).origin;
}

/** ``html`` (already sanitised) with every image that would load from elsewhere replaced by a link to it
 * (a link only to a web address: a blocked javascript: or data: source is not made clickable). */
export function neutralizeRemoteImages(html: string, base: string = pageUrl()): string {
  return html.replace(IMG, tag => {
    const src = attribute(tag, 'src') ?? '';
    const remote = isRemote(decodeAttribute(src), base);
    if (!remote && attribute(tag, 'srcset') === null) {
      return tag;
    }
    const label = attribute(tag, 'alt') || src || 'image';
    const web = ['http:', 'https:', 'ftp:'].includes(parse(decodeAttribute(src), base)?.protocol ?? '');
    const href = remote && web ? ` href="${src}"` : '';
    return (
      `<a class="jp-nbagent-remote-image"${href} target="_blank" rel="noopener noreferrer nofollow" ` +
      `title="remote image, not loaded: click to open">[image: ${label}]</a>`
    );
  });
}

const TAG_OR_TEXT = /(<[^>]*>)|([^<]+)/g;

/** ``html`` (already sanitised, so its text holds no raw "<") with each hidden character in its text, never
 * in a tag or an attribute, shown as a marked <U+202E> (hiddenChars.tsx's rule, for the model's answers). */
export function markHiddenCharacters(html: string): string {
  return html.replace(TAG_OR_TEXT, (whole, tag: string | undefined) =>
    tag
      ? whole
      : whole.replace(
          HIDDEN,
          c => `<span class="jp-nbagent-hidden-char" title="hidden character">${codePoint(c).replace('<', '&lt;').replace('>', '&gt;')}</span>`
        )
  );
}

/** A sanitiser that runs JupyterLab's own, then keeps remote images from loading and shows hidden characters. */
export class RemoteImageSanitizer implements IRenderMime.ISanitizer {
  constructor(
    private readonly base: IRenderMime.ISanitizer,
    private readonly page: () => string = pageUrl
  ) {}

  sanitize(dirty: string, options?: IRenderMime.ISanitizerOptions): string {
    return markHiddenCharacters(neutralizeRemoteImages(this.base.sanitize(dirty, options), this.page()));
  }

  getAutolink(): boolean {
    return this.base.getAutolink?.() ?? true;
  }

  get allowNamedProperties(): boolean | undefined {
    return this.base.allowNamedProperties;
  }
}
