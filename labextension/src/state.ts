/**
 * The panel's state: the engine's AgentState (generated types, events.ts) and the same pure reducer
 * as nbagent/agent_state.py, rule for rule, so a tab that joins from a snapshot and one that saw every
 * event show the same thing. tests/fixtures/event_sequences/*.json (recorded event sequences with the
 * state they reduce to) are run by both the Python tests and test/state.test.ts.
 *
 * Below the reducer, `panelView` turns an AgentState into what the panel draws (rows with stable keys);
 * nothing here touches the DOM or JupyterLab.
 */

import type {
  AgentEvent,
  AgentState,
  NoticeItem,
  PendingApproval,
  ReasoningItem,
  TextItem,
  ToolItem,
  Turn,
  TurnCheckpoint
} from './events';

import { contextNoteLine } from './contextNote';
import { AddedContext, splitPrompt } from './promptContext';

export type { AgentState, PendingApproval, ToolItem, Turn } from './events';

export type TurnItem = Turn['items'][number];

/** Notices outside any turn kept in the state (agent_state.MAX_NOTICES). */
export const MAX_NOTICES = 20;

/** AgentState() as Python makes it. */
export function initialState(sessionId: string | null = null): AgentState {
  return {
    session_id: sessionId,
    title: null,
    settings: {},
    queue: [],
    turn: null,
    approvals: [],
    todos: [],
    memory: [],
    counters: { input_tokens: 0, output_tokens: 0, cost: null, cached_tokens: 0, image_tokens: 0 },
    transcript: [],
    notices: [],
    undo_turn: null,
    redo_turn: null
  };
}

/** A turn in flight or prompts waiting (AgentState.busy). */
export function isBusy(state: AgentState): boolean {
  return state.turn !== null || state.queue.length > 0;
}

/** The state after `event`; `state` itself is left as it was (agent_state.reduce). */
export function reduce(state: AgentState, event: AgentEvent): AgentState {
  const s = state;
  const e = event;
  switch (e.type) {
    case 'turn_start': {
      const queue = s.queue.filter(q => q.turn_id !== e.turn_id);
      const turn: Turn = newTurn(e.turn_id, e.prompt);
      return {
        ...s,
        queue,
        turn,
        session_id: e.session_id || s.session_id,
        title: e.title !== null && e.title !== undefined ? e.title : s.title,
        memory: []
      };
    }
    case 'prompt_queued':
      return { ...s, queue: [...s.queue, { turn_id: e.turn_id, prompt: e.prompt }] };
    case 'text_delta':
      return withTurn(s, e.turn_id, t => delta(t, 'text', e.text));
    case 'reasoning_delta':
      return withTurn(s, e.turn_id, t => delta(t, 'reasoning', e.text));
    case 'tool_input_start':
      return withTurn(s, e.turn_id, t => updateTool(t, e.call_id, e.name, { status: 'input' }));
    case 'tool_input_delta':
      return withTurn(s, e.turn_id, t => {
        const current = lastTool(t, e.call_id);
        return updateTool(t, e.call_id, e.name, { input_text: (current ? current.input_text : '') + e.text });
      });
    case 'tool_call':
      return withTurn(s, e.turn_id, t => updateTool(t, e.call_id, e.name, { status: 'running', arguments: e.arguments }));
    case 'approval_request': {
      const pending: PendingApproval = {
        call_id: e.call_id,
        turn_id: e.turn_id,
        name: e.name,
        arguments: e.arguments,
        diff: e.diff,
        annotations: e.annotations
      };
      const next = { ...s, approvals: [...s.approvals.filter(a => a.call_id !== e.call_id), pending] };
      return withTurn(next, e.turn_id, t => updateTool(t, e.call_id, e.name, { status: 'awaiting_approval', diff: e.diff }));
    }
    case 'approval_decision': {
      const next = { ...s, approvals: s.approvals.filter(a => a.call_id !== e.call_id) };
      const status = e.decision === 'deny' ? 'denied' : 'running';
      return withTurn(next, e.turn_id, t => updateTool(t, e.call_id, e.name, { status, decision: e.decision, decided_by: e.by })
      );
    }
    case 'tool_result': {
      const next = { ...s, approvals: s.approvals.filter(a => a.call_id !== e.call_id) };
      return withTurn(next, e.turn_id, t =>
        updateTool(t, e.call_id, e.name, {
          status: e.status as ToolItem['status'],
          output: e.output,
          is_error: e.is_error,
          duration_ms: e.duration_ms
        })
      );
    }
    case 'kernel_changed': {
      const kernel = {
        added: [...e.added],
        rebound: [...e.rebound],
        deleted: [...e.deleted],
        mutated: [...e.mutated],
        unchecked: [...e.unchecked],
        dropped: [...e.dropped]
      };
      return withTurn(s, e.turn_id, t => updateTool(t, e.call_id, '', { kernel }));
    }
    case 'todos_changed':
      return { ...s, todos: [...e.todos] };
    case 'memory_changed': {
      const texts = e.entries.map(entry => pyStr('text' in entry ? entry.text : '')).join('; ');
      return notice(s, e.turn_id, { level: 'memory', text: texts ? `memory ${e.action}: ${texts}` : `memory ${e.action}`, kind: 'notice' });
    }
    case 'memory_injected': {
      const base = s.turn && s.turn.turn_id === e.turn_id ? s.turn.memory : [];
      const entries = mergeMemory(base, e.entries);
      return withTurn({ ...s, memory: entries }, e.turn_id, t => ({ ...t, memory: entries }));
    }
    case 'settings_changed':
      return { ...s, settings: { ...s.settings, ...e.settings } };
    case 'session_changed':
      return Object.keys(e.state).length
        ? { ...initialState(), ...(e.state as unknown as AgentState) }
        : { ...initialState(e.session_id), settings: s.settings };
    case 'usage': {
      const next = {
        ...s,
        counters: {
          input_tokens: e.total_input_tokens,
          output_tokens: e.total_output_tokens,
          cost: e.cost,
          cached_tokens: e.total_cached_tokens,
          // recorded before images were counted apart: none
          image_tokens: e.total_image_tokens ?? 0
        }
      };
      return withTurn(next, e.turn_id, t => ({
        ...t,
        input_tokens: t.input_tokens + e.input_tokens,
        output_tokens: t.output_tokens + e.output_tokens
      }));
    }
    case 'checkpoint': {
      // A turn's checkpoint taken, undone or redone: on that turn (live or finished); "diverged" is a notice.
      if (e.action === 'diverged') {
        return notice(s, e.turn_id, { level: 'info', text: 'changed since the last checkpoint: ' + e.files.join(', '), kind: 'notice' });
      }
      const mark = {
        turn: e.turn,
        files: [...e.files],
        undone: e.action === 'undone' && !(e.rows ?? []).length, // rows: part of the turn (a review)
        names: [...e.names],
        not_restored: [...e.not_restored],
        replay: (e.replay ?? []).map(c => ({ ...c })), // absent in sequences recorded before it existed
        replayed: null
      };
      const next = { ...s, undo_turn: e.undo_turn, redo_turn: e.redo_turn };
      return markTurn(next, e.turn_id, () => mark);
    }
    case 'kernel_replayed': {
      // Restart and replay ran: its outcome on the turn whose undo offered it.
      const outcome = { ran: [...e.ran], failed: e.failed, failed_cell_id: e.failed_cell_id, error: e.error };
      return markTurn(s, e.turn_id, mark => (mark ? { ...mark, replayed: outcome } : null));
    }
    case 'compacted':
      return notice(s, e.turn_id, { level: 'info', text: e.message, kind: 'notice' });
    case 'context_note':
      return notice(s, e.turn_id, { level: 'context', text: contextNoteLine(e), kind: 'notice' });
    case 'error':
      return notice(s, e.turn_id, { level: 'error', text: e.message, kind: 'notice' });
    case 'turn_end':
      return endTurn(s, e.turn_id, e.reason, e.text, e.steps);
    default:
      return s;
  }
}

/** ``change`` applied to the checkpoint of turn ``turnId`` (the live turn or one of the transcript). */
function markTurn(
  s: AgentState,
  turnId: string,
  change: (mark: TurnCheckpoint | null) => TurnCheckpoint | null
): AgentState {
  if (s.turn !== null && s.turn.turn_id === turnId) {
    return { ...s, turn: { ...s.turn, checkpoint: change(s.turn.checkpoint) } };
  }
  return { ...s, transcript: s.transcript.map(t => (turnId && t.turn_id === turnId ? { ...t, checkpoint: change(t.checkpoint) } : t)) };
}

function newTurn(turnId: string, prompt: string): Turn {
  return {
    turn_id: turnId,
    prompt,
    status: 'running',
    items: [],
    text: '',
    steps: 0,
    input_tokens: 0,
    output_tokens: 0,
    memory: [],
    checkpoint: null
  };
}

/** Apply `change` to the turn in flight when the event belongs to it. */
function withTurn(s: AgentState, turnId: string, change: (turn: Turn) => Turn): AgentState {
  if (s.turn === null || s.turn.turn_id !== turnId) {
    return s;
  }
  return { ...s, turn: change(s.turn) };
}

/** A delta extends the turn's last item when it is of the same kind, else starts one. */
function delta(turn: Turn, kind: 'text' | 'reasoning', text: string): Turn {
  const items = turn.items;
  const last = items[items.length - 1];
  if (last && last.kind === kind) {
    const joined: TextItem | ReasoningItem = { text: (last as TextItem | ReasoningItem).text + text, kind };
    return { ...turn, items: [...items.slice(0, -1), joined] };
  }
  return { ...turn, items: [...items, { text, kind }] };
}

function lastTool(turn: Turn, callId: string): ToolItem | null {
  for (let i = turn.items.length - 1; i >= 0; i--) {
    const item = turn.items[i];
    if (item.kind === 'tool' && item.call_id === callId) {
      return item;
    }
  }
  return null;
}

/** Change the tool item of `callId`, adding it at the end when the turn has none yet. */
function updateTool(turn: Turn, callId: string, name: string, changes: Partial<ToolItem>): Turn {
  for (let i = turn.items.length - 1; i >= 0; i--) {
    const item = turn.items[i];
    if (item.kind === 'tool' && item.call_id === callId) {
      const items = turn.items.slice();
      items[i] = { ...item, ...changes };
      return { ...turn, items };
    }
  }
  const fresh: ToolItem = {
    call_id: callId,
    name,
    status: 'input',
    input_text: '',
    arguments: null,
    diff: null,
    decision: null,
    decided_by: null,
    output: null,
    is_error: false,
    duration_ms: null,
    kernel: null,
    kind: 'tool',
    ...changes
  };
  return { ...turn, items: [...turn.items, fresh] };
}

/** In the turn it belongs to, else among the state's own notices (the newest MAX_NOTICES). */
function notice(s: AgentState, turnId: string, item: NoticeItem): AgentState {
  if (s.turn !== null && s.turn.turn_id === turnId) {
    return { ...s, turn: { ...s.turn, items: [...s.turn.items, item] } };
  }
  return { ...s, notices: [...s.notices, item].slice(-MAX_NOTICES) };
}

function endTurn(s: AgentState, turnId: string, reason: string, text: string, steps: number): AgentState {
  const queue = s.queue.filter(q => q.turn_id !== turnId);
  const approvals = s.approvals.filter(a => a.turn_id !== turnId);
  if (s.turn === null || s.turn.turn_id !== turnId) {
    return { ...s, queue, approvals };
  }
  // The engine ends every call with a tool_result; a call still open here was only being streamed.
  const items = s.turn.items.map(item =>
    item.kind === 'tool' && (item.status === 'input' || item.status === 'running' || item.status === 'awaiting_approval')
      ? { ...item, status: 'interrupted' as const }
      : item
  );
  const ended: Turn = { ...s.turn, status: reason as Turn['status'], text, steps, items };
  return { ...s, queue, approvals, turn: null, transcript: [...s.transcript, ended] };
}

/** Python's str() of a JSON value, for the few texts the reducer builds. */
function pyStr(value: unknown): string {
  if (value === null) {
    return 'None';
  }
  if (typeof value === 'boolean') {
    return value ? 'True' : 'False';
  }
  return typeof value === 'string' ? value : JSON.stringify(value);
}

// ---------------------------------------------------------------- what the panel draws

export interface UserRow {
  kind: 'user';
  key: string;
  /** What the user typed (what nbagent added after it is `context`, shown as a chip). */
  text: string;
  context: AddedContext | null;
}
export interface AnswerRow {
  kind: 'assistant';
  key: string;
  text: string;
  streaming: boolean;
}
export interface ReasoningRow {
  kind: 'reasoning';
  key: string;
  text: string;
  streaming: boolean;
}
export interface ToolRowItem {
  kind: 'tool';
  key: string;
  tool: ToolItem;
}
export interface NoteRow {
  kind: 'note';
  key: string;
  text: string;
  tone: 'info' | 'error';
}
/** A finished turn's file changes, with its Undo/Redo state (checkpoints.tsx renders it). */
export interface CheckpointItem {
  kind: 'checkpoint';
  key: string;
  id: string;
  turn: number;
  files: string[];
  undone: boolean;
  /** After an undo or redo: the kernel variables bound again, and what could not be restored. */
  names: string[];
  not_restored: string[];
  /** After an undo that could not restore everything: the restart-and-replay plan on offer, and its outcome once run. */
  replay: { [k: string]: unknown }[];
  replayed: { [k: string]: unknown } | null;
  /** Shown after this many turns of the transcript (the turn it belongs to). */
  after: number;
}
export type Row = UserRow | AnswerRow | ReasoningRow | ToolRowItem | NoteRow | CheckpointItem;

export interface Todo {
  text: string;
  status: string; // pending | in_progress | completed | blocked
  note: string | null; // why it is blocked
}

// ---------------------------------------------------------------- beyond AgentState

/**
 * The transcript as rows: every finished turn, then the turn in flight (each followed by its
 * checkpoint), then notices outside turns.
 */
export function rows(state: AgentState): Row[] {
  const out: Row[] = [];
  const turns = [...state.transcript, ...(state.turn ? [state.turn] : [])];
  turns.forEach((turn, i) => {
    turnRows(turn, turn === state.turn, out);
    if (turn.checkpoint) {
      const id = `checkpoint-${turn.checkpoint.turn}`;
      out.push({ kind: 'checkpoint', key: id, id, ...turn.checkpoint, after: i + 1 });
    }
  });
  state.notices.forEach((n, i) => out.push({ kind: 'note', key: `notice-${i}-${n.text}`, text: n.text, tone: n.level === 'error' ? 'error' : 'info' }));
  return out;
}

function turnRows(turn: Turn, live: boolean, out: Row[]): void {
  const key = turn.turn_id;
  if (turn.prompt) {
    const { typed, context } = splitPrompt(turn.prompt);
    out.push({ kind: 'user', key: `${key}:prompt`, text: typed, context });
  }
  let sawText = false;
  turn.items.forEach((item, i) => {
    const streaming = live && i === turn.items.length - 1;
    if (item.kind === 'text') {
      sawText = true;
      out.push({ kind: 'assistant', key: `${key}:${i}`, text: item.text, streaming });
    } else if (item.kind === 'reasoning') {
      out.push({ kind: 'reasoning', key: `${key}:${i}`, text: item.text, streaming });
    } else if (item.kind === 'tool') {
      out.push({ kind: 'tool', key: `${key}:${item.call_id}`, tool: item });
    } else {
      out.push({ kind: 'note', key: `${key}:${i}`, text: item.text, tone: item.level === 'error' ? 'error' : 'info' });
    }
  });
  if (!live && !sawText && turn.text) {
    out.push({ kind: 'assistant', key: `${key}:answer`, text: turn.text, streaming: false });
  }
  if (!live && turn.status === 'aborted') {
    out.push({ kind: 'note', key: `${key}:end`, text: 'Turn aborted.', tone: 'info' });
  } else if (!live && turn.status === 'max_steps') {
    out.push({ kind: 'note', key: `${key}:end`, text: 'Stopped: the step limit for one turn was reached.', tone: 'info' });
  }
}

/** The call in flight: the turn's last call not finished yet (streaming, running or awaiting a decision). */
export function inFlight(state: AgentState): ToolItem | null {
  const items = state.turn?.items ?? [];
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i];
    if (item.kind === 'tool' && (item.status === 'input' || item.status === 'running' || item.status === 'awaiting_approval')) {
      return item;
    }
  }
  return null;
}

export function todosOf(state: AgentState): Todo[] {
  return state.todos.map(t => ({
    text: String(t.content ?? t.text ?? ''),
    status: String(t.status ?? 'pending'),
    note: t.note ? String(t.note) : null
  }));
}

export function todoProgress(todos: Todo[]): { done: number; total: number } {
  return { done: todos.filter(t => t.status === 'completed').length, total: todos.length };
}

/** Whether a tool's output carries a unified diff (the edit tools append one): then it is coloured. */
export function looksLikeDiff(text: string): boolean {
  return /^--- .*\n\+\+\+ .*\n@@ /m.test(text);
}

/** Diff lines classified for colouring. */
export function diffLines(diff: string): Array<{ text: string; kind: 'add' | 'del' | 'hunk' | 'meta' | 'ctx' }> {
  return diff.split('\n').map(text => {
    if (text.startsWith('+++') || text.startsWith('---')) {
      return { text, kind: 'meta' as const };
    }
    if (text.startsWith('+')) {
      return { text, kind: 'add' as const };
    }
    if (text.startsWith('-')) {
      return { text, kind: 'del' as const };
    }
    if (text.startsWith('@@')) {
      return { text, kind: 'hunk' as const };
    }
    return { text, kind: 'ctx' as const };
  });
}

/**
 * Every entry injected into a turn, each once (by source and id, else by text); an entry told again
 * (a search found a listed one) keeps its place and gains the newer fields (score, why).
 */
function mergeMemory(
  base: Record<string, unknown>[],
  added: Record<string, unknown>[]
): Record<string, unknown>[] {
  const merged = new Map<string, Record<string, unknown>>();
  for (const entry of [...base, ...added]) {
    const key = memoryKey(entry);
    merged.set(key, { ...(merged.get(key) ?? {}), ...entry });
  }
  return [...merged.values()];
}

function memoryKey(entry: Record<string, unknown>): string {
  if (entry.id === null || entry.id === undefined) {
    return JSON.stringify(['text', entry.text]);
  }
  return JSON.stringify([entry.source || 'workspace', entry.id]);
}
