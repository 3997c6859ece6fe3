/**
 * What a screen reader hears of a streaming answer: whole paragraphs, through a polite live region,
 * never token by token (a region rewritten at every delta is either silent or a stutter).
 */

/** The last announcement: which answer it came from, how far into its text, and what was said. */
export interface Spoken {
  key: string;
  upTo: number;
  text: string;
}

export const NOTHING_SPOKEN: Spoken = { key: '', upTo: 0, text: '' };

/** Where the finished paragraphs of ``text`` end: at its last blank line while it streams, else its end. */
export function finishedUpTo(text: string, streaming: boolean): number {
  if (!streaming) {
    return text.length;
  }
  const cut = text.lastIndexOf('\n\n');
  return cut < 0 ? 0 : cut;
}

/** Markdown as it would be read: no heading marks, emphasis stars, backticks or link targets. */
export function spokenText(markdown: string): string {
  return markdown
    .replace(/^\s{0,3}#{1,6}\s+/gm, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[*_`]+/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * The next announcement for the answer ``key`` whose text is ``text``: the paragraphs finished since
 * ``prev``, or ``prev`` itself (the region unchanged) when none was.
 */
export function nextSpoken(prev: Spoken, key: string, text: string, streaming: boolean): Spoken {
  const start = prev.key === key ? prev.upTo : 0;
  const end = finishedUpTo(text, streaming);
  if (end <= start) {
    return prev;
  }
  const said = spokenText(text.slice(start, end));
  return said ? { key, upTo: end, text: said } : { ...prev, key, upTo: end };
}
