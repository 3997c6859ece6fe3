import { describe, expect, it } from 'vitest';
import * as React from 'react';
import { renderToStaticMarkup } from 'react-dom/server';

import { codePoint, hiddenSegments, Visible } from '../src/hiddenChars';
import { plain } from '../src/settingsTab';

// Finding 12 of "Trust": the approval card shows what runs, hidden characters included.
describe('hidden characters in approval cards', () => {
  it('are cut out as marks, and newlines and tabs stay', () => {
    expect(hiddenSegments('rm\u202e -rf\u200b x\u2028y\n\tz')).toEqual([
      { text: 'rm', hidden: false },
      { text: '\u202e', hidden: true },
      { text: ' -rf', hidden: false },
      { text: '\u200b', hidden: true },
      { text: ' x', hidden: false },
      { text: '\u2028', hidden: true },
      { text: 'y\n\tz', hidden: false }
    ]);
    expect(codePoint('\u202e')).toBe('<U+202E>');
    expect(hiddenSegments('')).toEqual([{ text: '', hidden: false }]);
  });

  it('render as visible, escaped marks', () => {
    const html = renderToStaticMarkup(React.createElement(Visible, { text: 'echo \u202eexe.txt\u001b[2J <b>' }));
    expect(html).not.toContain('\u202e');
    expect(html).not.toContain('\u001b');
    expect(html).toContain('<span class="jp-nbagent-hidden-char" title="hidden character">&lt;U+202E&gt;</span>');
    expect(html).toContain('&lt;U+001B&gt;');
    expect(html).toContain('&lt;b&gt;');
  });

  it('one rule for one-line text too', () => {
    expect(plain('a\u202eb\u200bc\nd')).toBe('a\\u202eb\\u200bc d');
  });
});
