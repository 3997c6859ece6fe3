import { readdirSync, readFileSync } from 'fs';
import { join } from 'path';

import * as React from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';

import { CheckpointBar, type CheckpointInfo, ReplayOffer, replayCells, replayOutcomeLine, replayTotal } from '../src/checkpoints';
import type { AgentEvent, AgentState } from '../src/events';
import {
  diffLines,
  inFlight,
  initialState,
  isBusy,
  looksLikeDiff,
  reduce,
  rows,
  todoProgress,
  todosOf
} from '../src/state';

const SEQUENCES = join(__dirname, '..', '..', 'tests', 'fixtures', 'event_sequences');
const T = 'turn1';

interface Sequence {
  description: string;
  events: AgentEvent[];
  expected: AgentState;
}

function run(events: Array<Partial<AgentEvent> & { type: string }>, start: AgentState = initialState('s1')): AgentState {
  return events.reduce((s, e) => reduce(s, { turn_id: T, ...e } as AgentEvent), start);
}

describe('the recorded event sequences (the same files the Python tests replay)', () => {
  const files = readdirSync(SEQUENCES).filter(f => f.endsWith('.json'));

  it('are there', () => {
    expect(files.length).toBeGreaterThanOrEqual(5);
  });

  for (const file of files) {
    it(`reduce to their expected state: ${file}`, () => {
      const sequence = JSON.parse(readFileSync(join(SEQUENCES, file), 'utf8')) as Sequence;
      const state = sequence.events.reduce(reduce, initialState());
      expect(state).toEqual(sequence.expected);
    });
  }
});

describe('reduce', () => {
  it('leaves the state it was given as it was', () => {
    const before = run([
      { type: 'turn_start', prompt: 'hi', session_id: 's1', title: null },
      { type: 'text_delta', text: 'Hel' }
    ]);
    const copy = JSON.parse(JSON.stringify(before));
    const after = reduce(before, { type: 'text_delta', text: 'lo', turn_id: T });
    expect(before).toEqual(copy);
    expect(after.turn?.items).toEqual([{ text: 'Hello', kind: 'text' }]);
  });

  it('ignores events of another turn and event types it does not know', () => {
    const s = run([{ type: 'turn_start', prompt: 'q', session_id: 's1', title: null }]);
    expect(reduce(s, { type: 'text_delta', text: 'x', turn_id: 'other' })).toBe(s);
    expect(reduce(s, { type: 'no_such_event', turn_id: T } as unknown as AgentEvent)).toBe(s);
  });

  it('replaces the whole state on session_changed', () => {
    const s = run([{ type: 'settings_changed', settings: { model: 'm1' } }, { type: 'turn_start', prompt: 'q', session_id: 's1', title: null }]);
    const fresh = reduce(s, { type: 'session_changed', session_id: 's2', state: {}, turn_id: '' });
    expect(fresh).toEqual({ ...initialState('s2'), settings: { model: 'm1' } });
    const given = { ...initialState('s3'), title: 'resumed' };
    expect(reduce(s, { type: 'session_changed', session_id: 's3', state: given as never, turn_id: '' })).toEqual(given);
  });
});

describe('what the panel draws', () => {
  it('puts paragraphs and tool rows in the order they happened, the last one streaming', () => {
    const s = run([
      { type: 'turn_start', prompt: 'q', session_id: 's1', title: null },
      { type: 'text_delta', text: 'before' },
      { type: 'tool_input_start', name: 'read_file', call_id: 'c1' },
      { type: 'tool_result', name: 'read_file', call_id: 'c1', output: 'x', is_error: false, status: 'done', duration_ms: 3 },
      { type: 'text_delta', text: 'after' }
    ]);
    expect(rows(s).map(r => [r.kind, r.kind === 'tool' ? r.tool.call_id : 'text' in r ? r.text : ''])).toEqual([
      ['user', 'q'],
      ['assistant', 'before'],
      ['tool', 'c1'],
      ['assistant', 'after']
    ]);
    expect(rows(s).map(r => ('streaming' in r ? r.streaming : null))).toEqual([null, false, null, true]);
    expect(new Set(rows(s).map(r => r.key)).size).toBe(4);
  });

  it("shows turn_end's text when nothing was streamed, and says why a turn stopped", () => {
    const s = run([
      { type: 'turn_start', prompt: 'q', session_id: 's1', title: null },
      { type: 'turn_end', reason: 'max_steps', text: 'whole answer', steps: 1 }
    ]);
    expect(rows(s).map(r => ('text' in r ? r.text : ''))).toEqual([
      'q',
      'whole answer',
      'Stopped: the step limit for one turn was reached.'
    ]);
    expect(isBusy(s)).toBe(false);
  });

  it('names the call in flight, awaiting a decision included, until its result', () => {
    let s = run([
      { type: 'turn_start', prompt: 'q', session_id: 's1', title: null },
      { type: 'tool_input_start', name: 'edit_file', call_id: 'c1' }
    ]);
    expect(inFlight(s)?.name).toBe('edit_file');
    s = run([{ type: 'approval_request', name: 'edit_file', call_id: 'c1', arguments: { path: 'a' }, diff: '-a\n+b' }], s);
    expect(inFlight(s)?.status).toBe('awaiting_approval');
    expect(s.approvals.map(a => a.call_id)).toEqual(['c1']);
    s = run([{ type: 'tool_result', name: 'edit_file', call_id: 'c1', output: '', is_error: false, status: 'done', duration_ms: 1 }], s);
    expect(inFlight(s)).toBeNull();
    expect(s.approvals).toEqual([]);
  });

  it('normalises todos and counts progress', () => {
    const s = run([
      {
        type: 'todos_changed',
        todos: [
          { content: 'a', status: 'completed' },
          { content: 'b', status: 'blocked', note: 'needs a key' }
        ]
      }
    ]);
    const todos = todosOf(s);
    expect(todos[1]).toEqual({ text: 'b', status: 'blocked', note: 'needs a key' });
    expect(todoProgress(todos)).toEqual({ done: 1, total: 2 });
  });
});

describe('checkpoints and context notes', () => {
  function play(events: Array<Partial<AgentEvent> & { type: string }>): AgentState {
    return events.reduce((state, e) => reduce(state, { turn_id: T, ...e } as AgentEvent), initialState('s1'));
  }
  const checkpoint = (action: string, undo: number | null, redo: number | null, notRestored: string[] = []) =>
    ({ type: 'checkpoint', action, turn: 1, files: ['a.py'], undo_turn: undo, redo_turn: redo, names: [], not_restored: notRestored }) as const;

  it("puts a turn's checkpoint after the turn, updates it in place on undo, and shows context notes", () => {
    const state = play([
      { type: 'turn_start', prompt: 'edit', session_id: 's1', title: null },
      { type: 'text_delta', text: 'Edited.' },
      checkpoint('taken', 1, null),
      { type: 'turn_end', reason: 'done', text: 'Edited.', steps: 1 },
      { type: 'context_note', source: 'build', change: 'failing', summary: '2 failed', changes: 1, note_id: 'n', text: '', session_id: 's1' },
      { type: 'turn_start', prompt: 'next', session_id: 's1', title: null, turn_id: 'turn2' } as never,
      checkpoint('undone', null, 1, ['df (changed in place)'])
    ]);
    // A note delivered between turns is one of the state's own notices (agent_state._notice).
    expect(rows(state).map(r => r.kind)).toEqual(['user', 'assistant', 'checkpoint', 'user', 'note']);
    expect(state.transcript[0].checkpoint).toEqual({
      turn: 1,
      files: ['a.py'],
      undone: true,
      names: [],
      not_restored: ['df (changed in place)'],
      replay: [],
      replayed: null
    });
    expect([state.undo_turn, state.redo_turn]).toEqual([null, 1]);
    expect(rows(state)[4]).toMatchObject({ text: 'context: build is failing: 2 failed' });
  });
});

describe('restart and replay', () => {
  const plan = [
    { execution_count: 1, cell_id: 'load', seconds: 0.5, origin: 'history+notebook', line: 'import pandas as pd' },
    { execution_count: 2, cell_id: null, seconds: null, origin: 'history', line: 'df = <b>pd.read_csv("a.csv")</b>' }
  ];
  const undone = { type: 'checkpoint', action: 'undone', turn: 1, files: [], undo_turn: null, redo_turn: 1, names: [],
    not_restored: ['df (changed in place)'], replay: plan, turn_id: T } as const;

  function play(events: AgentEvent[]): AgentState {
    return events.reduce(reduce, initialState('s1'));
  }

  it('keeps the plan an undo offered on its turn, then the outcome once it ran', () => {
    const start = { type: 'turn_start', prompt: 'clean df', session_id: 's1', title: null, turn_id: T } as AgentEvent;
    const end = { type: 'turn_end', reason: 'done', text: '', steps: 1, turn_id: T } as AgentEvent;
    let state = play([start, end, undone as unknown as AgentEvent]);
    expect(state.transcript[0].checkpoint?.replay).toEqual(plan);
    expect(state.transcript[0].checkpoint?.replayed).toBeNull();
    state = reduce(state, { type: 'kernel_replayed', turn: 1, ran: [1], failed: 2, failed_cell_id: null,
      error: 'FileNotFoundError: a.csv', turn_id: T });
    expect(state.transcript[0].checkpoint?.replayed).toEqual({ ran: [1], failed: 2, failed_cell_id: null, error: 'FileNotFoundError: a.csv' });
    expect(state.transcript[0].checkpoint?.replay).toEqual(plan);
  });

  it('shows the plan (ids, times, first lines as text) and asks before running it', () => {
    const cells = replayCells({ turn: 1, files: [], undone: true, replay: plan });
    expect(replayTotal(cells)).toBe('about 0.5 s and more (some cells were not timed)');
    expect(replayTotal(cells.map(c => ({ ...c, seconds: null })))).toBe('time not known (no cell was timed)');
    const props = { turn: 1, cells, busy: false, onAsk: () => {}, onConfirm: () => {}, onCancel: () => {} };
    const offered = renderToStaticMarkup(React.createElement(ReplayOffer, { ...props, confirming: false }));
    expect(offered).toContain('data-cell-id="load"');
    expect(offered).toContain('cell load');
    expect(offered).toContain('not in the notebook');
    expect(offered).toContain('0.50 s');
    expect(offered).toContain('not timed');
    expect(offered).toContain('&lt;b&gt;pd.read_csv');
    expect(offered).not.toContain('<b>');
    expect(offered).toContain('Restart and replay…');
    expect(offered).not.toContain('Confirm');
    const confirming = renderToStaticMarkup(React.createElement(ReplayOffer, { ...props, confirming: true }));
    expect(confirming).toContain('Confirm: clear the variables and run 2 cell(s)');
    expect(confirming).toContain('Cancel');
    const busy = renderToStaticMarkup(React.createElement(ReplayOffer, { ...props, confirming: true, busy: true }));
    expect(busy).toMatch(/<button class="[^"]*jp-nbagent-replay-run" disabled=""/);
  });

  it('puts the offer under an undone turn only, and the outcome in its place once run', () => {
    const bar = (checkpoint: CheckpointInfo) => renderToStaticMarkup(React.createElement(CheckpointBar, {
      checkpoint, undoTurn: null, redoTurn: 1, busy: false, onUndo: () => {}, onRedo: () => {}, onReplay: () => {}
    }));
    const info: CheckpointInfo = { turn: 1, files: [], undone: true, not_restored: ['df (changed in place)'], replay: plan };
    expect(bar(info)).toContain('Restart and replay…');
    expect(bar({ ...info, undone: false })).not.toContain('Restart and replay');
    const stopped = bar({ ...info, replayed: { ran: [1], failed: 2, failed_cell_id: 'clean', error: 'KeyError: x' } });
    expect(stopped).toContain('replay stopped at cell [2] (ran 1 before it, notebook cell clean): KeyError: x');
    expect(stopped).not.toContain('Restart and replay');
    expect(replayOutcomeLine({ ran: [1, 2], failed: null })).toBe('replayed 2 cell(s)');
  });
});

describe('diffs', () => {
  it('spots a unified diff inside a tool output', () => {
    expect(looksLikeDiff('edited a.py\n--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x\n+y')).toBe(true);
    expect(looksLikeDiff('just text')).toBe(false);
  });

  it('classifies unified diff lines for colouring', () => {
    expect(diffLines('--- a\n+++ b\n@@ -1 +1 @@\n-x\n+y\n z').map(l => l.kind)).toEqual(['meta', 'meta', 'hunk', 'del', 'add', 'ctx']);
  });
});
