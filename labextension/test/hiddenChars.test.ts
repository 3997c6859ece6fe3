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

// Issue 35, finding 5: the characters that still passed unmarked, the Hangul filler among them (a valid
// Python name: kernel_run's card showed run('hello', ㅤ='$(id)') with the parameter invisible).
describe('the invisible characters of issue 35', () => {
  const chars = ['\u061c', '\u00ad', '\u180e', '\u034f', '\ufe0f', '\u{e0041}', '\u{e0100}', '\u115f', '\u1160', '\u3164', '\uffa0'];
  it('are each marked', () => {
    for (const c of chars) {
      expect(hiddenSegments(`a${c}b`)).toEqual([
        { text: 'a', hidden: false },
        { text: c, hidden: true },
        { text: 'b', hidden: false }
      ]);
    }
    expect(codePoint('\u3164')).toBe('<U+3164>');
    expect(codePoint('\u{e0041}')).toBe('<U+E0041>');
  });

  it('show in one-line text as escapes', () => {
    expect(plain("run('hello', \u3164='$(id)')")).toBe("run('hello', \\u3164='$(id)')");
    expect(plain('x\u{e0041}')).toBe('x\\U000e0041');
  });
});
