import { describe, expect, it } from 'vitest';

import { atToken, HISTORY_LIMIT, insertPath, moveSelection, newer, newHistory, older, remember } from '../src/input';

describe('prompt history', () => {
  it('walks back with Up and forward with Down, restoring the draft', () => {
    let h = remember(remember(newHistory(), 'one'), 'two');
    const up1 = older(h, 'draft')!;
    expect(up1.text).toBe('two');
    const up2 = older(up1.history, 'two')!;
    expect(up2.text).toBe('one');
    expect(older(up2.history, 'one')).toBeNull();
    const down1 = newer(up2.history)!;
    expect(down1.text).toBe('two');
    const down2 = newer(down1.history)!;
    expect(down2.text).toBe('draft');
    expect(newer(down2.history)).toBeNull();
    h = down2.history;
    expect(h.index).toBe(2);
  });

  it('deduplicates against the newest entry, skips blanks and caps the list', () => {
    let h = newHistory();
    h = remember(remember(remember(h, 'a'), 'a'), '   ');
    expect(h.entries).toEqual(['a']);
    for (let i = 0; i < HISTORY_LIMIT + 5; i++) {
      h = remember(h, `p${i}`);
    }
    expect(h.entries).toHaveLength(HISTORY_LIMIT);
    expect(h.entries[h.entries.length - 1]).toBe(`p${HISTORY_LIMIT + 4}`);
  });

  it('has nothing to walk when empty', () => {
    expect(older(newHistory(), 'x')).toBeNull();
    expect(newer(newHistory())).toBeNull();
  });
});

describe('@ token', () => {
  it('finds the token the caret is in', () => {
    expect(atToken('look at @src/ma', 15)).toEqual({ start: 8, query: 'src/ma' });
    expect(atToken('@', 1)).toEqual({ start: 0, query: '' });
    expect(atToken('line\n@x', 7)).toEqual({ start: 5, query: 'x' });
  });

  it('ignores e-mail addresses and finished tokens', () => {
    expect(atToken('me@example.com', 14)).toBeNull();
    expect(atToken('@a.py done', 10)).toBeNull();
  });

  it('inserts the chosen path and puts the caret after it', () => {
    const text = 'open @sr please';
    const token = atToken(text, 8)!;
    expect(insertPath(text, 8, token, 'src/main.py')).toEqual({ text: 'open @src/main.py please', caret: 18 });
    const end = insertPath('@re', 3, atToken('@re', 3)!, 'README.md');
    expect(end).toEqual({ text: '@README.md ', caret: 11 });
  });
});

describe('picker selection', () => {
  it('wraps around in both directions', () => {
    expect(moveSelection(0, 3, -1)).toBe(2);
    expect(moveSelection(2, 3, 1)).toBe(0);
    expect(moveSelection(0, 0, 1)).toBe(0);
  });
});
