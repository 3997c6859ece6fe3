/**
 * The prompt box's rules, kept pure: the prompt history walked with Up and Down, and the `@`
 * token that opens the file picker.
 */

export interface PromptHistory {
  entries: string[]; // oldest first
  /** Position while walking: entries.length means "not walking" (the draft is shown). */
  index: number;
  /** What was typed before the walk began; Down past the newest entry restores it. */
  draft: string;
}

export const HISTORY_LIMIT = 200;

export function newHistory(entries: string[] = []): PromptHistory {
  const kept = entries.slice(-HISTORY_LIMIT);
  return { entries: kept, index: kept.length, draft: '' };
}

/** Record a sent prompt: deduplicated against the newest entry, capped, walk reset. */
export function remember(h: PromptHistory, prompt: string): PromptHistory {
  const text = prompt.trim();
  if (!text) {
    return { ...h, index: h.entries.length, draft: '' };
  }
  const entries = h.entries[h.entries.length - 1] === text ? h.entries : [...h.entries, text].slice(-HISTORY_LIMIT);
  return { entries, index: entries.length, draft: '' };
}

/** Up: the previous entry, or null when there is none (the key then does its usual thing). */
export function older(h: PromptHistory, current: string): { history: PromptHistory; text: string } | null {
  if (h.index === 0 || h.entries.length === 0) {
    return null;
  }
  const draft = h.index === h.entries.length ? current : h.draft;
  const index = h.index - 1;
  return { history: { ...h, index, draft }, text: h.entries[index] };
}

/** Down: the next entry, then the draft; null when not walking. */
export function newer(h: PromptHistory): { history: PromptHistory; text: string } | null {
  if (h.index >= h.entries.length) {
    return null;
  }
  const index = h.index + 1;
  const text = index === h.entries.length ? h.draft : h.entries[index];
  return { history: { ...h, index }, text };
}

export interface AtToken {
  /** Index of the `@` in the text. */
  start: number;
  /** What follows the `@` up to the caret. */
  query: string;
}

/** The `@word` the caret is in, if any: `@` at the start or after whitespace, no space inside. */
export function atToken(text: string, caret: number): AtToken | null {
  const before = text.slice(0, caret);
  const match = /(^|\s)@([^\s@]*)$/.exec(before);
  if (!match) {
    return null;
  }
  return { start: before.length - match[2].length - 1, query: match[2] };
}

/** Replace the token by the chosen path (and a space), returning the new text and caret. */
export function insertPath(text: string, caret: number, token: AtToken, path: string): { text: string; caret: number } {
  const after = text.slice(caret).replace(/^[^\s]*/, ''); // the rest of a half-typed word goes
  const inserted = `@${path} `;
  const head = text.slice(0, token.start) + inserted;
  return { text: head + after.replace(/^ /, ''), caret: head.length };
}

/** Move a selection through `count` picker entries, wrapping around. */
export function moveSelection(selected: number, count: number, delta: number): number {
  if (count === 0) {
    return 0;
  }
  return (((selected + delta) % count) + count) % count;
}
