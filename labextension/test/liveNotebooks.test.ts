import { describe, expect, it } from 'vitest';

import { applyOps, StaleError } from '../src/liveNotebooks';

/** A stand-in for the shared notebook: plain cells whose updateSource records the ranges it got. */
function fakeNotebook(sources: string[]) {
  const edits: Array<[number, number, string]> = [];
  const cell = (id: string, source: string) => ({
    id,
    cell_type: 'code',
    source,
    execution_count: 1 as number | null,
    outputs: [{}] as unknown[],
    updateSource(start: number, end: number, value = '') {
      edits.push([start, end, value]);
      this.source = this.source.slice(0, start) + value + this.source.slice(end);
    },
    setOutputs(o: unknown[]) {
      this.outputs = o;
    },
    toJSON() {
      return { id: this.id, cell_type: this.cell_type, source: this.source, metadata: {} };
    }
  });
  const nb = {
    cells: sources.map((s, i) => cell(`c${i}`, s)),
    nbformat_minor: 4,
    insertCell(index: number, c: Record<string, unknown>) {
      const made = cell(String(c.id), String(c.source));
      this.cells.splice(index, 0, made);
      return made;
    },
    deleteCell(index: number) {
      this.cells.splice(index, 1);
    },
    transact(f: () => void) {
      f();
    }
  };
  return { nb, edits };
}

describe('applyOps', () => {
  it('edits only the differing range, in UTF-16 units, and clears outputs', () => {
    const { nb, edits } = fakeNotebook(['héllo 😀 wörld']);
    applyOps(nb, [{ op: 'edit', cell_id: 'c0', source: 'héllo 😀 world', expect: { cell_type: 'code', source: 'héllo 😀 wörld' } }]);
    expect(nb.cells[0].source).toBe('héllo 😀 world');
    expect(edits).toEqual([[10, 11, 'o']]);
    expect(nb.cells[0].outputs).toEqual([]);
    expect(nb.nbformat_minor).toBe(5);
  });

  it('refuses a cell that changed since the server checked it, and writes nothing', () => {
    const { nb } = fakeNotebook(['a = 1', 'b = 2']);
    const ops = [
      { op: 'delete' as const, cell_id: 'c0', expect: { cell_type: 'code', source: 'a = 1' } },
      { op: 'edit' as const, cell_id: 'c1', source: 'b = 3', expect: { cell_type: 'code', source: 'b = 0' } }
    ];
    expect(() => applyOps(nb, ops)).toThrow(StaleError);
    expect(nb.cells.map(c => c.source)).toEqual(['a = 1', 'b = 2']);
  });

  it('moves by deleting and inserting a copy; a range edit keeps the rest of the cell', () => {
    const { nb } = fakeNotebook(['a', 'b', '# user typed\nc = 3']);
    applyOps(nb, [{ op: 'move', cell_id: 'c2', after_cell_id: null }]);
    expect(nb.cells.map(c => c.id)).toEqual(['c2', 'c0', 'c1']);
    applyOps(nb, [{ op: 'edit', cell_id: 'c2', source: 'c = 30', old_text: 'c = 3' }]);
    expect(nb.cells[0].source).toBe('# user typed\nc = 30');
  });
});
