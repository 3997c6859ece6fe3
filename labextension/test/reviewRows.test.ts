import { describe, expect, it } from 'vitest';

import {
  actionBodies,
  ChangeRow,
  groupRows,
  lineDiff,
  nextIndex,
  ordered,
  pathBodies,
  rowLabel,
  rowLines,
  splitLines,
  summary,
  verbs
} from '../src/reviewRows';

function row(over: Partial<ChangeRow>): ChangeRow {
  return {
    id: 't:0', session: 's1', turn: 1, path: 'a.ipynb', cell_id: 'c1', kind: 'source', hunk: 0,
    before: 'x = 1\n', after: 'x = 2\n', start_before: 1, start_after: 1, status: 'pending', ...over
  };
}

describe('groupRows', () => {
  it('groups the open rows by turn and cell, oldest turn first, and leaves kept and undone rows out', () => {
    const groups = groupRows([
      { session: 's1', turn: 1, rows: [row({ id: 'a' }), row({ id: 'b', hunk: 1 }), row({ id: 'c', cell_id: 'c2' }),
        row({ id: 'd', cell_id: 'c3', status: 'kept' }), row({ id: 'e', cell_id: 'c4', status: 'undone' })] },
      { session: 's1', turn: 2, rows: [row({ id: 'f', turn: 2 })] }
    ]);
    expect(groups.map(g => [g.turn, g.cellId, g.rows.map(r => r.id)])).toEqual([
      [1, 'c1', ['a', 'b']], [1, 'c2', ['c']], [2, 'c1', ['f']]
    ]);
  });
});

describe('lines', () => {
  it('splits without the empty line after a final newline', () => {
    expect(splitLines('a\nb\n')).toEqual(['a', 'b']);
    expect(splitLines('a\n\nb')).toEqual(['a', '', 'b']);
    expect(splitLines('')).toEqual([]);
  });

  it('diffs whole texts by common lines', () => {
    expect(lineDiff('a\nb\nc\n', 'a\nB\nc\nd\n')).toEqual([
      { sign: ' ', text: 'a' }, { sign: '-', text: 'b' }, { sign: '+', text: 'B' }, { sign: ' ', text: 'c' },
      { sign: '+', text: 'd' }
    ]);
    expect(lineDiff('', 'new\n')).toEqual([{ sign: '+', text: 'new' }]);
  });

  it("shows a hunk's removed then added lines, and nothing for a move", () => {
    expect(rowLines(row({ before: 'a\nb\n', after: 'c\n' })).map(l => l.sign + l.text)).toEqual(['-a', '-b', '+c']);
    expect(rowLines(row({ kind: 'moved', hunk: null }))).toEqual([]);
    expect(rowLines(row({ kind: 'added', hunk: null, before: '', after: 'y\n' }))).toEqual([{ sign: '+', text: 'y' }]);
    expect(rowLines(row({ kind: 'outputs', hunk: null, before: '[1]\n2', after: '[None]' })).map(l => l.sign + l.text))
      .toEqual(['-[1]', '-2', '+[None]']);
  });
});

describe('labels', () => {
  it('names hunks by number and lines, whole-cell rows by what happened', () => {
    expect(rowLabel(row({ hunk: 1, start_after: 3, after: 'p\nq\n' }))).toBe('hunk 2, lines 3-4');
    expect(rowLabel(row({ hunk: 0, start_before: 5, before: 'gone\n', after: '' }))).toBe('hunk 1, line 5');
    expect(rowLabel(row({ kind: 'deleted', hunk: null }))).toBe('cell deleted');
    expect(rowLabel(row({ kind: 'outputs', hunk: null }))).toBe('outputs and execution count changed');
    expect(rowLabel(row({ kind: 'moved', hunk: null, start_before: 2, start_after: 4 }))).toBe(
      'cell moved from position 2 to 4'
    );
  });

  it('says Apply / Reject for suggestions only', () => {
    expect(verbs([row({ status: 'suggested' })])).toEqual({ keep: 'Apply', undo: 'Reject' });
    expect(verbs([row({ status: 'suggested' }), row({})])).toEqual({ keep: 'Keep', undo: 'Undo' });
  });

  it('summarises rows and turns', () => {
    const groups = groupRows([{ session: 's', turn: 1, rows: [row({ id: 'a' }), row({ id: 'b', cell_id: 'c2' })] }]);
    expect(summary(groups)).toBe('nbagent: 2 changes to review from 1 turn');
  });
});

describe('request bodies', () => {
  it('sends one body per turn naming the rows', () => {
    const bodies = actionBodies([row({ id: 'a' }), row({ id: 'b' }), row({ id: 'c', turn: 2 })]);
    expect(bodies).toEqual([
      { session: 's1', turn: 1, only: ['a', 'b'] },
      { session: 's1', turn: 2, only: ['c'] }
    ]);
  });

  it('names the path for Keep all / Undo all, and undoes the newest turn first', () => {
    const groups = groupRows([
      { session: 's1', turn: 1, rows: [row({ id: 'a' }), row({ id: 'b', cell_id: 'c2' })] },
      { session: 's1', turn: 2, rows: [row({ id: 'c', turn: 2 })] }
    ]);
    const bodies = pathBodies(groups, 'a.ipynb');
    expect(bodies).toEqual([
      { session: 's1', turn: 1, only: ['a.ipynb'] },
      { session: 's1', turn: 2, only: ['a.ipynb'] }
    ]);
    expect(ordered(bodies, 'undo').map(b => b.turn)).toEqual([2, 1]);
    expect(ordered(bodies, 'keep').map(b => b.turn)).toEqual([1, 2]);
  });
});

describe('nextIndex', () => {
  it('starts at either end and wraps', () => {
    expect(nextIndex(-1, 3, 1)).toBe(0);
    expect(nextIndex(-1, 3, -1)).toBe(2);
    expect(nextIndex(2, 3, 1)).toBe(0);
    expect(nextIndex(0, 3, -1)).toBe(2);
    expect(nextIndex(0, 0, 1)).toBe(-1);
  });
});
