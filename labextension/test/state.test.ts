import { describe, expect, it } from 'vitest';

import type { AgentEvent } from '../src/events';
import {
  appendMessages,
  clearQueue,
  diffLines,
  fromSnapshot,
  looksLikeDiff,
  initialState,
  PanelState,
  reduce,
  todoProgress,
  ToolItem
} from '../src/state';

const T = 'turn1';

function run(events: Array<Partial<AgentEvent> & { type: string }>, start: PanelState = initialState('s1')): PanelState {
  return events.reduce((s, e) => reduce(s, { turn_id: T, ...e } as AgentEvent), start);
}

function tool(state: PanelState, callId: string): ToolItem {
  const item = state.items.find(i => i.kind === 'tool' && i.id === callId);
  if (!item) {
    throw new Error(`no tool row ${callId}`);
  }
  return item as ToolItem;
}

describe('streaming', () => {
  it('joins text deltas into one answer and shows the prompt first', () => {
    const s = run([
      { type: 'turn_start', prompt: 'hi', session_id: 's1' },
      { type: 'text_delta', text: 'Hel' },
      { type: 'text_delta', text: 'lo' }
    ]);
    expect(s.busy).toBe(true);
    expect(s.items.map(i => [i.kind, 'text' in i ? i.text : ''])).toEqual([
      ['user', 'hi'],
      ['assistant', 'Hello']
    ]);
  });

  it('keeps reasoning apart from the answer and closes it when the answer starts', () => {
    const s = run([
      { type: 'turn_start', prompt: 'q', session_id: 's1' },
      { type: 'reasoning_delta', text: 'think' },
      { type: 'reasoning_delta', text: 'ing' },
      { type: 'text_delta', text: 'A' }
    ]);
    expect(s.items[1]).toMatchObject({ kind: 'reasoning', text: 'thinking', streaming: false });
    expect(s.items[2]).toMatchObject({ kind: 'assistant', text: 'A', streaming: true });
  });

  it('starts a new answer block after a tool row', () => {
    const s = run([
      { type: 'turn_start', prompt: 'q', session_id: 's1' },
      { type: 'text_delta', text: 'before' },
      { type: 'tool_input_start', name: 'read_file', call_id: 'c1' },
      { type: 'tool_result', name: 'read_file', call_id: 'c1', output: 'x', is_error: false, status: 'done', duration_ms: 3 },
      { type: 'text_delta', text: 'after' }
    ]);
    expect(s.items.map(i => i.kind)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(s.items[1]).toMatchObject({ text: 'before', streaming: false });
  });

  it('shows turn_end text when nothing was streamed', () => {
    const s = run([
      { type: 'turn_start', prompt: 'q', session_id: 's1' },
      { type: 'turn_end', reason: 'done', text: 'whole answer', steps: 1 }
    ]);
    expect(s.items[1]).toMatchObject({ kind: 'assistant', text: 'whole answer' });
    expect(s.busy).toBe(false);
  });

  it('does not repeat streamed text at turn end', () => {
    const s = run([
      { type: 'turn_start', prompt: 'q', session_id: 's1' },
      { type: 'text_delta', text: 'once' },
      { type: 'turn_end', reason: 'done', text: 'once', steps: 1 }
    ]);
    expect(s.items.filter(i => i.kind === 'assistant')).toHaveLength(1);
  });
});

describe('tools', () => {
  it('names the tool in flight from tool_input_start and clears it on its result', () => {
    let s = run([
      { type: 'turn_start', prompt: 'q', session_id: 's1' },
      { type: 'tool_input_start', name: 'edit_file', call_id: 'c1' }
    ]);
    expect(s.inFlight).toEqual({ name: 'edit_file', callId: 'c1' });
    expect(tool(s, 'c1').status).toBe('input');
    s = run([
      { type: 'tool_input_delta', name: 'edit_file', call_id: 'c1', text: '{"path":' },
      { type: 'tool_input_delta', name: 'edit_file', call_id: 'c1', text: '"a.py"}' },
      { type: 'tool_call', name: 'edit_file', call_id: 'c1', arguments: { path: 'a.py' } }
    ], s);
    expect(tool(s, 'c1')).toMatchObject({ argsText: '{"path":"a.py"}', args: { path: 'a.py' }, status: 'running' });
    expect(s.inFlight).not.toBeNull();
    s = run([{ type: 'tool_result', name: 'edit_file', call_id: 'c1', output: 'ok', is_error: false, status: 'done', duration_ms: 12 }], s);
    expect(s.inFlight).toBeNull();
    expect(tool(s, 'c1')).toMatchObject({ status: 'done', output: 'ok', durationMs: 12 });
  });

  it('keeps the in-flight tool when another call finishes', () => {
    const s = run([
      { type: 'tool_input_start', name: 'a', call_id: 'c1' },
      { type: 'tool_input_start', name: 'b', call_id: 'c2' },
      { type: 'tool_result', name: 'a', call_id: 'c1', output: '', is_error: false, status: 'done', duration_ms: 1 }
    ]);
    expect(s.inFlight).toEqual({ name: 'b', callId: 'c2' });
  });

  it('creates a row from tool_call when no input events came first', () => {
    const s = run([{ type: 'tool_call', name: 'bash', call_id: 'c9', arguments: { command: 'ls' } }]);
    expect(tool(s, 'c9')).toMatchObject({ status: 'running', argsText: '{"command":"ls"}' });
  });

  it('reports failed, denied and killed results', () => {
    const s = run([
      { type: 'tool_result', name: 'a', call_id: 'f', output: 'boom', is_error: true, status: 'failed', duration_ms: 1 },
      { type: 'tool_result', name: 'b', call_id: 'k', output: 'killed by the user', is_error: true, status: 'killed', duration_ms: 1 },
      { type: 'tool_result', name: 'c', call_id: 'x', output: 'err', is_error: true, status: 'weird', duration_ms: 1 }
    ]);
    expect([tool(s, 'f').status, tool(s, 'k').status, tool(s, 'x').status]).toEqual(['failed', 'killed', 'failed']);
  });
});

describe('approvals', () => {
  const request = {
    type: 'approval_request',
    name: 'edit_file',
    call_id: 'c1',
    arguments: { path: 'a.py' },
    diff: '--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 1\n+x = 2'
  };

  it("keeps an MCP tool's annotations on its card", () => {
    const hints = { destructiveHint: true, readOnlyHint: false };
    const s = run([{ ...request, name: 'mcp__fs__rm', call_id: 'c9', diff: null, annotations: hints }]);
    expect(s.approvals[0]).toMatchObject({ callId: 'c9', annotations: hints });
  });

  it('shows a card with the diff until the decision arrives', () => {
    let s = run([{ type: 'tool_call', name: 'edit_file', call_id: 'c1', arguments: { path: 'a.py' } }, request]);
    expect(s.approvals).toEqual([
      { callId: 'c1', name: 'edit_file', args: { path: 'a.py' }, diff: request.diff, annotations: null }
    ]);
    expect(tool(s, 'c1')).toMatchObject({ status: 'awaiting', diff: request.diff });
    s = run([{ type: 'approval_decision', name: 'edit_file', call_id: 'c1', decision: 'approve', by: 'user' }], s);
    expect(s.approvals).toEqual([]);
    expect(tool(s, 'c1')).toMatchObject({ status: 'running', decision: 'approve' });
  });

  it('marks a denied call', () => {
    const s = run([request, { type: 'approval_decision', name: 'edit_file', call_id: 'c1', decision: 'deny', by: 'user' }]);
    expect(tool(s, 'c1').status).toBe('denied');
  });

  it('drops pending cards when the turn ends (an abort)', () => {
    const s = run([request, { type: 'turn_end', reason: 'aborted', text: '', steps: 1 }]);
    expect(s.approvals).toEqual([]);
    expect(tool(s, 'c1').status).toBe('killed');
  });
});

describe('queue', () => {
  it('lists queued prompts and removes each as its turn starts', () => {
    let s = run([
      { type: 'turn_start', prompt: 'first', session_id: 's1' },
      { type: 'prompt_queued', prompt: 'second', position: 1 },
      { type: 'prompt_queued', prompt: 'third', position: 2 }
    ]);
    expect(s.queue).toEqual(['second', 'third']);
    s = run([
      { type: 'turn_end', reason: 'done', text: '', steps: 1 },
      { type: 'turn_start', prompt: 'second', session_id: 's1' }
    ], s);
    expect(s.queue).toEqual(['third']);
    expect(s.busy).toBe(true);
  });

  it('clears the queue when the turn is aborted', () => {
    const s = run([
      { type: 'turn_start', prompt: 'first', session_id: 's1' },
      { type: 'prompt_queued', prompt: 'second', position: 1 },
      { type: 'turn_end', reason: 'aborted', text: '', steps: 0 }
    ]);
    expect(s.queue).toEqual([]);
    expect(s.items[s.items.length - 1]).toMatchObject({ kind: 'note', text: 'Turn aborted.' });
  });

  it('clearQueue empties it and keeps the same state object when already empty', () => {
    const s = run([{ type: 'prompt_queued', prompt: 'x', position: 1 }]);
    expect(clearQueue(s).queue).toEqual([]);
    const empty = initialState();
    expect(clearQueue(empty)).toBe(empty);
  });
});

describe('todos, usage and notes', () => {
  it('normalises todos and counts progress', () => {
    const s = run([
      {
        type: 'todos_changed',
        todos: [
          { content: 'read', status: 'completed' },
          { content: 'edit', status: 'in_progress' },
          { content: 'test', status: 'blocked', note: 'needs a key' }
        ]
      }
    ]);
    expect(s.todos.map(t => t.text)).toEqual(['read', 'edit', 'test']);
    expect(s.todos[2]).toEqual({ text: 'test', status: 'blocked', note: 'needs a key' });
    expect(todoProgress(s.todos)).toEqual({ done: 1, total: 3 });
  });

  it('shows the session totals, cost included, and keeps a known cost when one is unknown', () => {
    const s = run([
      { type: 'usage', input_tokens: 10, output_tokens: 5, total_input_tokens: 110, total_output_tokens: 55, cost: 0.5 },
      { type: 'usage', input_tokens: 10, output_tokens: 5, total_input_tokens: 120, total_output_tokens: 60, cost: 0.75 },
      { type: 'usage', input_tokens: 1, output_tokens: 1, total_input_tokens: 121, total_output_tokens: 61, cost: null }
    ]);
    expect(s.counters).toEqual({ inputTokens: 121, outputTokens: 61, cost: 0.75 });
  });

  it('turns errors and engine notes into transcript notes', () => {
    const s = run([
      { type: 'error', message: 'rate limited', kind: 'rate_limit', status_code: 429 },
      { type: 'compacted', before: 40, after: 3, message: '' },
      { type: 'checkpoint', action: 'diverged', turn: 0, files: ['a.py'], undo_turn: null, redo_turn: null }
    ]);
    expect(s.items.map(i => (i.kind === 'note' ? [i.tone, i.text] : null))).toEqual([
      ['error', 'rate limited'],
      ['info', 'compacted: 40 → 3 messages'],
      ['info', 'changed since the last checkpoint: a.py']
    ]);
  });

  it('keeps one checkpoint item per turn, undone and redone in place, and the undo/redo targets', () => {
    const taken = { type: 'checkpoint' as const, action: 'taken', turn: 2, files: ['a.py', 'b.py'], undo_turn: 2, redo_turn: null };
    let s = run([taken]);
    expect(s.items.filter(i => i.kind === 'checkpoint')).toEqual([
      { kind: 'checkpoint', id: expect.any(String), turn: 2, files: ['a.py', 'b.py'], undone: false }
    ]);
    expect([s.undoTurn, s.redoTurn]).toEqual([2, null]);
    s = reduce(s, { ...taken, action: 'undone', undo_turn: null, redo_turn: 2 });
    const items = s.items.filter(i => i.kind === 'checkpoint');
    expect(items.length).toBe(1);
    expect(items[0]).toMatchObject({ turn: 2, undone: true });
    expect([s.undoTurn, s.redoTurn]).toEqual([null, 2]);
  });

  it('ignores unknown event types', () => {
    const s = initialState();
    expect(reduce(s, { type: 'from_the_future', turn_id: '' } as unknown as AgentEvent)).toBe(s);
  });
});

describe('history', () => {
  it('rebuilds the transcript from stored messages', () => {
    const s = appendMessages(initialState('s1'), [
      { role: 'user', content: 'fix it' },
      {
        role: 'assistant',
        content: 'Looking.',
        reasoning: 'hmm',
        tool_calls: [{ id: 'c1', name: 'read_file', arguments: '{"path":"a.py"}' }]
      },
      { role: 'tool', tool_call_id: 'c1', name: 'read_file', content: 'x = 1', is_error: false },
      { role: 'assistant', content: 'Done.' }
    ]);
    expect(s.items.map(i => i.kind)).toEqual(['user', 'reasoning', 'assistant', 'tool', 'assistant']);
    expect(tool(s, 'c1')).toMatchObject({ args: { path: 'a.py' }, output: 'x = 1', status: 'done' });
  });

  it('keeps malformed stored arguments as text', () => {
    const s = appendMessages(initialState(), [
      { role: 'assistant', content: '', tool_calls: [{ id: 'c1', name: 'x', arguments: '{broken' }] }
    ]);
    expect(tool(s, 'c1')).toMatchObject({ args: null, argsText: '{broken' });
  });

  it('builds the state from a snapshot', () => {
    const s = fromSnapshot({
      type: 'snapshot',
      session_id: 's2',
      title: null,
      messages: [{ role: 'user', content: 'a' }, { role: 'user', content: 'b', summary: true }],
      todos: [{ content: 't', status: 'pending' }],
      usage: { input_tokens: 3, output_tokens: 4, cost: null },
      busy: false
    });
    expect(s.sessionId).toBe('s2');
    expect(s.items.map(i => i.kind)).toEqual(['user', 'note']);
    expect(s.todos).toEqual([{ text: 't', status: 'pending', note: null }]);
    expect(s.counters).toEqual({ inputTokens: 3, outputTokens: 4, cost: null });
  });
});

describe('looksLikeDiff', () => {
  it('spots a unified diff inside a tool output', () => {
    expect(looksLikeDiff('Edited a.py (1 replacement)\n--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x\n+y')).toBe(true);
    expect(looksLikeDiff('--- not a diff\njust text')).toBe(false);
    expect(looksLikeDiff('')).toBe(false);
  });
});

describe('diffLines', () => {
  it('classifies unified diff lines for colouring', () => {
    expect(diffLines('--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new\n same').map(l => l.kind)).toEqual([
      'meta',
      'meta',
      'hunk',
      'del',
      'add',
      'ctx'
    ]);
  });
});
