/**
 * The review's rows (GET /nbagent/api/changes, see docs/notebooks.md "Reviewing a turn") and the pure
 * logic the view draws from them: rows grouped by cell, the lines of a hunk, labels, request bodies.
 * No DOM here, so that all of it is unit-tested.
 */

export type ChangeKind = 'source' | 'added' | 'deleted' | 'moved' | 'outputs' | 'file';
export type ChangeStatus = 'pending' | 'kept' | 'undone' | 'suggested';

/** One row of a turn's changes: a hunk of a cell's source or of a text file, or a whole-cell change. */
export interface ChangeRow {
  id: string;
  session: string;
  turn: number;
  path: string;
  cell_id: string | null;
  kind: ChangeKind;
  hunk: number | null;
  before: string;
  after: string;
  start_before: number;
  start_after: number;
  status: ChangeStatus;
}

export interface ChangeTurn {
  session: string;
  turn: number;
  rows: ChangeRow[];
}

/** The rows of one cell (or of one text file) in one turn: what a cell's Keep / Undo act on. */
export interface ReviewGroup {
  key: string;
  session: string;
  turn: number;
  path: string;
  cellId: string | null;
  rows: ChangeRow[];
}

export type ReviewAction = 'keep' | 'undo' | 'redo';

/** The body of POST changes/keep|undo|redo: ``only`` null means the whole turn. */
export interface ActionBody {
  session: string;
  turn: number;
  only: string[] | null;
}

export interface DiffLine {
  sign: '-' | '+' | ' ';
  text: string;
}

const OPEN: ChangeStatus[] = ['pending', 'suggested'];

/** Rows still to review, grouped by turn then cell, oldest turn first, in the server's row order. */
export function groupRows(turns: ChangeTurn[]): ReviewGroup[] {
  const groups = new Map<string, ReviewGroup>();
  for (const turn of turns) {
    for (const row of turn.rows) {
      if (!OPEN.includes(row.status)) {
        continue;
      }
      const key = `${row.session}:${row.turn}:${row.path}:${row.cell_id ?? ''}`;
      let group = groups.get(key);
      if (!group) {
        group = { key, session: row.session, turn: row.turn, path: row.path, cellId: row.cell_id, rows: [] };
        groups.set(key, group);
      }
      group.rows.push(row);
    }
  }
  return [...groups.values()];
}

/** A text's lines without the empty one after a final newline. */
export function splitLines(text: string): string[] {
  if (!text) {
    return [];
  }
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') {
    lines.pop();
  }
  return lines;
}

/** A line diff (longest common subsequence), for whole-cell rows whose before/after are full texts. */
export function lineDiff(before: string, after: string): DiffLine[] {
  const a = splitLines(before);
  const b = splitLines(after);
  // Common lines; the table is fine for a cell, and a text file's hunks come already cut by the server.
  const table: number[][] = Array.from({ length: a.length + 1 }, () => new Array(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      table[i][j] = a[i] === b[j] ? table[i + 1][j + 1] + 1 : Math.max(table[i + 1][j], table[i][j + 1]);
    }
  }
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      out.push({ sign: ' ', text: a[i++] });
      j++;
    } else if (i < a.length && (j === b.length || table[i + 1][j] >= table[i][j + 1])) {
      out.push({ sign: '-', text: a[i++] }); // removed lines before added ones, as in a unified diff
    } else {
      out.push({ sign: '+', text: b[j++] });
    }
  }
  return out;
}

/** The lines a row shows: a hunk's removed then added lines; a whole-cell row's line diff. */
export function rowLines(row: ChangeRow): DiffLine[] {
  if (row.kind === 'moved') {
    return [];
  }
  if (row.hunk === null) { // whole cells, outputs (as text), a cell whose type changed
    return lineDiff(row.before, row.after);
  }
  return [
    ...splitLines(row.before).map(text => ({ sign: '-' as const, text })),
    ...splitLines(row.after).map(text => ({ sign: '+' as const, text }))
  ];
}

function span(start: number, text: string): string {
  const n = splitLines(text).length;
  return n <= 1 ? `line ${start}` : `lines ${start}-${start + n - 1}`;
}

/** What a row is, in words (buttons' and groups' labels, screen readers). */
export function rowLabel(row: ChangeRow): string {
  switch (row.kind) {
    case 'added':
      return 'cell added';
    case 'deleted':
      return 'cell deleted';
    case 'moved':
      return `cell moved from position ${row.start_before} to ${row.start_after}`;
    case 'outputs':
      return 'outputs and execution count changed';
    default: {
      if (row.hunk === null) {
        return row.kind === 'file' ? 'file changed' : 'source changed';
      }
      const where = row.after ? span(row.start_after, row.after) : span(row.start_before, row.before);
      return `hunk ${row.hunk + 1}, ${where}`;
    }
  }
}

/** What the group is, in words: "cell 3, turn 2" or "analysis.py, turn 2". */
export function groupLabel(group: ReviewGroup, cellNumber: number | null): string {
  const what = group.cellId === null ? group.path : cellNumber === null ? 'a deleted cell' : `cell ${cellNumber}`;
  return `${what}, turn ${group.turn}`;
}

/** Suggested rows (review before writing) are not in the file yet: keeping one applies it. */
export function verbs(rows: ChangeRow[]): { keep: string; undo: string } {
  return rows.every(r => r.status === 'suggested') ? { keep: 'Apply', undo: 'Reject' } : { keep: 'Keep', undo: 'Undo' };
}

/** The bodies for an action over some rows: one per turn (the server takes one turn per call). */
export function actionBodies(rows: ChangeRow[]): ActionBody[] {
  const byTurn = new Map<string, ActionBody>();
  for (const row of rows) {
    const key = `${row.session}:${row.turn}`;
    const body = byTurn.get(key) ?? { session: row.session, turn: row.turn, only: [] };
    body.only!.push(row.id);
    byTurn.set(key, body);
  }
  return [...byTurn.values()];
}

/** One body per turn naming the path: "Keep all / Undo all" for one notebook or file. */
export function pathBodies(groups: ReviewGroup[], path: string): ActionBody[] {
  const seen = new Map<string, ActionBody>();
  for (const g of groups) {
    seen.set(`${g.session}:${g.turn}`, { session: g.session, turn: g.turn, only: [path] });
  }
  return [...seen.values()];
}

/** Undo goes newest turn first (a later turn's edit sits on top of an earlier one's); keep in any order. */
export function ordered(bodies: ActionBody[], action: ReviewAction): ActionBody[] {
  return action === 'undo' ? [...bodies].reverse() : bodies;
}

/** The next focus index among ``count`` hunks, wrapping; ``current`` -1 means none focused yet. */
export function nextIndex(current: number, count: number, step: 1 | -1): number {
  if (count === 0) {
    return -1;
  }
  if (current < 0) {
    return step === 1 ? 0 : count - 1;
  }
  return (current + step + count) % count;
}

/** A one-line summary for the bar. */
export function summary(groups: ReviewGroup[]): string {
  const rows = groups.reduce((n, g) => n + g.rows.length, 0);
  const turns = new Set(groups.map(g => `${g.session}:${g.turn}`)).size;
  const suggested = groups.every(g => g.rows.every(r => r.status === 'suggested'));
  const what = suggested ? 'suggested change' : 'change';
  return `nbagent: ${rows} ${what}${rows === 1 ? '' : 's'} to review from ${turns} turn${turns === 1 ? '' : 's'}`;
}
