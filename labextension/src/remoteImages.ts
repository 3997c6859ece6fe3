/**
 * Remote images in the model's answers are never fetched on their own: an image URL can carry data out
 * (a model steered by a hostile file can put a secret in it). After JupyterLab's sanitizer has run, each
 * <img> whose source is remote (http, https, protocol-relative, ftp) or that has a srcset becomes a link
 * the user can click to open it. Images from data: URIs and the server's own files are kept.
 */
import type { IRenderMime } from '@jupyterlab/rendermime';

const IMG = /<img\b[^>]*>/gi;

/** The value of one attribute of a sanitised tag (the sanitiser writes them double-quoted). */
function attribute(tag: string, name: string): string | null {
  const match = new RegExp(`\\s${name}="([^"]*)"`, 'i').exec(tag);
  return match ? match[1] : null;
}

export function isRemote(src: string): boolean {
  return /^\s*((https?|ftp):)?\/\//i.test(src.replace(/&amp;/g, '&'));
}

/** ``html`` (already sanitised) with every remote image replaced by a link to it. */
export function neutralizeRemoteImages(html: string): string {
  return html.replace(IMG, tag => {
    const src = attribute(tag, 'src') ?? '';
    if (!isRemote(src) && attribute(tag, 'srcset') === null) {
      return tag;
    }
    const label = attribute(tag, 'alt') || src || 'image';
    const href = isRemote(src) ? ` href="${src}"` : '';
    return (
      `<a class="jp-nbagent-remote-image"${href} target="_blank" rel="noopener noreferrer nofollow" ` +
      `title="remote image, not loaded: click to open">[image: ${label}]</a>`
    );
  });
}

/** A sanitiser that runs JupyterLab's own, then keeps remote images from loading. */
export class RemoteImageSanitizer implements IRenderMime.ISanitizer {
  constructor(private readonly base: IRenderMime.ISanitizer) {}

  sanitize(dirty: string, options?: IRenderMime.ISanitizerOptions): string {
    return neutralizeRemoteImages(this.base.sanitize(dirty, options));
  }

  getAutolink(): boolean {
    return this.base.getAutolink?.() ?? true;
  }

  get allowNamedProperties(): boolean | undefined {
    return this.base.allowNamedProperties;
  }
}
