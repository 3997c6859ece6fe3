import { describe, expect, it } from 'vitest';

import { finishedUpTo, nextSpoken, NOTHING_SPOKEN, spokenText } from '../src/announce';

describe('the polite announcement of a streaming answer', () => {
  it('says nothing until a paragraph is finished', () => {
    expect(nextSpoken(NOTHING_SPOKEN, 'a1', 'Let me', true)).toBe(NOTHING_SPOKEN);
    expect(nextSpoken(NOTHING_SPOKEN, 'a1', 'Let me look at the file', true)).toBe(NOTHING_SPOKEN);
  });

  it('says each paragraph once, as it is finished, and the rest when the answer ends', () => {
    let spoken = nextSpoken(NOTHING_SPOKEN, 'a1', 'First **point**.\n\nSecond', true);
    expect(spoken.text).toBe('First point.');
    expect(nextSpoken(spoken, 'a1', 'First **point**.\n\nSecond par', true)).toBe(spoken); // per paragraph, not per token
    spoken = nextSpoken(spoken, 'a1', 'First **point**.\n\nSecond part.\n\nThi', true);
    expect(spoken.text).toBe('Second part.');
    spoken = nextSpoken(spoken, 'a1', 'First **point**.\n\nSecond part.\n\nThird.', false);
    expect(spoken.text).toBe('Third.');
    expect(nextSpoken(spoken, 'a1', 'First **point**.\n\nSecond part.\n\nThird.', false)).toBe(spoken);
  });

  it('starts over for a new answer', () => {
    const first = nextSpoken(NOTHING_SPOKEN, 'a1', 'Done.', false);
    expect(nextSpoken(first, 'a2', 'Next answer.', false)).toEqual({ key: 'a2', upTo: 12, text: 'Next answer.' });
  });

  it('reads Markdown as words', () => {
    expect(spokenText('## Done\n\nThe colour is **blue** in `notes.txt`, see [docs](http://x).')).toBe(
      'Done The colour is blue in notes.txt, see docs.'
    );
    expect(finishedUpTo('a\n\nb', true)).toBe(1);
    expect(finishedUpTo('a\n\nb', false)).toBe(4);
  });
});
