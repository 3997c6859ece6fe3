/**
 * Hidden characters shown, the panel's half of nbagent/render/escape.py (the same set, the same marks):
 * C0/C1 controls, bidi overrides and isolates, zero-width marks, line and paragraph separators, the BOM,
 * the soft hyphen, variation selectors, the tag block and the Hangul fillers (U+3164 is a valid Python name)
 * can make an approval card's command read differently from what runs. Each one is shown as a marked-up
 * <U+202E> (as GitHub's hidden-Unicode warning does); React escapes the rest.
 */
import * as React from 'react';

/** Newline and tab are kept (multi-line commands keep their lines); every other control is shown. */
export const HIDDEN =
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u00ad\u034f\u061c\u115f\u1160\u180e\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2064\u2066-\u2069\u3164\ufe00-\ufe0f\ufeff\uffa0\u{e0000}-\u{e007f}\u{e0100}-\u{e01ef}]/gu;

/** "<U+202E>" for one hidden character. */
export function codePoint(char: string): string {
  return `<U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}>`;
}

/** ``text`` cut into plain runs and hidden characters, in order. */
export function hiddenSegments(text: string): { text: string; hidden: boolean }[] {
  const out: { text: string; hidden: boolean }[] = [];
  let last = 0;
  for (const match of text.matchAll(HIDDEN)) {
    if (match.index! > last) {
      out.push({ text: text.slice(last, match.index), hidden: false });
    }
    out.push({ text: match[0], hidden: true });
    last = match.index! + match[0].length;
  }
  if (last < text.length || out.length === 0) {
    out.push({ text: text.slice(last), hidden: false });
  }
  return out;
}

/** ``text`` as React nodes, each hidden character a visible, titled mark. */
export function Visible({ text }: { text: string }): React.ReactElement {
  return (
    <>
      {hiddenSegments(text).map((segment, i) =>
        segment.hidden ? (
          <span key={i} className="jp-nbagent-hidden-char" title="hidden character">
            {codePoint(segment.text)}
          </span>
        ) : (
          segment.text
        )
      )}
    </>
  );
}
