/**
 * The panel's state: a pure reducer over the engine's events.
 *
 * Nothing here touches the DOM or JupyterLab, so every rule of the panel (where a delta goes,
 * when the tool in flight clears, what abort does to the queue) is unit-tested in plain Node.
 */

import { contextNoteLine } from './contextNote';
import type { AgentEvent, StoredMessage } from './events';

export type ToolStatus =
  | 'input' // the model is still streaming the arguments
  | 'running'
  | 'awaiting' // waiting for an approval decision
  | 'done'
  | 'failed'
  | 'denied'
  | 'killed';

export interface UserItem {
  kind: 'user';
  id: string;
  text: string;
}
export interface AssistantItem {
  kind: 'assistant';
  id: string;
  text: string;
  streaming: boolean;
}
export interface ReasoningItem {
  kind: 'reasoning';
  id: string;
  text: string;
  streaming: boolean;
}
export interface ToolItem {
  kind: 'tool';
  id: string; // the call id
  name: string;
  argsText: string; // raw JSON as streamed
  args: Record<string, unknown> | null;
  status: ToolStatus;
  output: string;
  isError: boolean;
  durationMs: number | null;
  diff: string | null;
  decision: string | null;
}
export interface NoteItem {
  kind: 'note';
  id: string;
  text: string;
  tone: 'info' | 'error';
}
/** A finished turn's file changes, with its Undo/Redo state (src/checkpoints.tsx renders it). */
export interface CheckpointItem {
  kind: 'checkpoint';
  id: string;
  turn: number;
  files: string[];
  undone: boolean;
}
export type Item = UserItem | AssistantItem | ReasoningItem | ToolItem | NoteItem | CheckpointItem;

export interface Todo {
  text: string;
  status: string; // pending | in_progress | completed | blocked
  note: string | null; // why it is blocked
}

export interface Approval {
  callId: string;
  name: string;
  args: Record<string, unknown>;
  diff: string | null;
  /** An MCP tool's hints as its server declares them: shown on the card, never trusted. */
  annotations: Record<string, unknown> | null;
}

export interface Counters {
  inputTokens: number;
  outputTokens: number;
  cost: number | null;
}

export interface PanelState {
  sessionId: string | null;
  items: Item[];
  busy: boolean;
  turnId: string | null;
  /** Set by tool_input_start, cleared by that call's tool_result (and at turn end). */
  inFlight: { name: string; callId: string } | null;
  todos: Todo[];
  approvals: Approval[];
  queue: string[];
  counters: Counters;
  /** The turns /undo and /redo would act on now (from the latest checkpoint event). */
  undoTurn: number | null;
  redoTurn: number | null;
  /** Whether the current turn has streamed answer text (else turn_end.text is shown). */
  turnHadText: boolean;
  seq: number;
}

/** Sent by the server first on every WebSocket: the stored transcript, then live events follow. */
export interface Snapshot {
  type: 'snapshot';
  session_id: string;
  title: string | null;
  messages: StoredMessage[];
  todos: Array<Record<string, unknown>>;
  usage: { input_tokens: number; output_tokens: number; cost: number | null };
  busy: boolean;
}

export function initialState(sessionId: string | null = null): PanelState {
  return {
    sessionId,
    items: [],
    busy: false,
    turnId: null,
    inFlight: null,
    todos: [],
    approvals: [],
    queue: [],
    counters: { inputTokens: 0, outputTokens: 0, cost: null },
    undoTurn: null,
    redoTurn: null,
    turnHadText: false,
    seq: 0
  };
}

/** The whole state after the server's snapshot (a fresh connection or a reconnection). */
export function fromSnapshot(snap: Snapshot): PanelState {
  const base = initialState(snap.session_id);
  const withItems = appendMessages(base, snap.messages);
  return {
    ...withItems,
    todos: normalizeTodos(snap.todos),
    counters: {
      inputTokens: snap.usage.input_tokens,
      outputTokens: snap.usage.output_tokens,
      cost: snap.usage.cost
    }
  };
}

export function reduce(state: PanelState, event: AgentEvent): PanelState {
  switch (event.type) {
    case 'turn_start': {
      const queue = removeFirst(state.queue, event.prompt);
      const next = { ...state, busy: true, turnId: event.turn_id, queue, turnHadText: false };
      return push(finishStreaming(next), { kind: 'user', text: event.prompt });
    }
    case 'prompt_queued':
      return { ...state, queue: [...state.queue, event.prompt] };
    case 'text_delta':
      return { ...appendStreaming(state, 'assistant', event.text), turnHadText: true };
    case 'reasoning_delta':
      return appendStreaming(state, 'reasoning', event.text);
    case 'tool_input_start': {
      const next = { ...finishStreaming(state), inFlight: { name: event.name, callId: event.call_id } };
      return upsertTool(next, event.call_id, event.name, t => t);
    }
    case 'tool_input_delta':
      return upsertTool(state, event.call_id, event.name, t => ({ ...t, argsText: t.argsText + event.text }));
    case 'tool_call':
      return upsertTool(finishStreaming(state), event.call_id, event.name, t => ({
        ...t,
        args: event.arguments,
        argsText: t.argsText || JSON.stringify(event.arguments),
        status: t.status === 'input' ? 'running' : t.status
      }));
    case 'approval_request': {
      const approval = {
        callId: event.call_id, name: event.name, args: event.arguments, diff: event.diff,
        annotations: event.annotations ?? null
      };
      const approvals = [...state.approvals.filter(a => a.callId !== event.call_id), approval];
      return upsertTool({ ...state, approvals }, event.call_id, event.name, t => ({
        ...t,
        args: event.arguments,
        status: 'awaiting',
        diff: event.diff
      }));
    }
    case 'approval_decision': {
      const approvals = state.approvals.filter(a => a.callId !== event.call_id);
      const approved = event.decision !== 'deny';
      return upsertTool({ ...state, approvals }, event.call_id, event.name, t => ({
        ...t,
        decision: event.decision,
        status: approved ? 'running' : 'denied'
      }));
    }
    case 'tool_result': {
      const inFlight = state.inFlight?.callId === event.call_id ? null : state.inFlight;
      const approvals = state.approvals.filter(a => a.callId !== event.call_id);
      return upsertTool({ ...state, inFlight, approvals }, event.call_id, event.name, t => ({
        ...t,
        status: toolStatus(event.status, event.is_error),
        output: event.output,
        isError: event.is_error,
        durationMs: event.duration_ms
      }));
    }
    case 'todos_changed':
      return { ...state, todos: normalizeTodos(event.todos) };
    case 'memory_changed':
      return note(state, `memory ${event.action}: ${event.entries.length} entr${event.entries.length === 1 ? 'y' : 'ies'}`);
    case 'usage':
      return {
        ...state,
        counters: {
          inputTokens: event.total_input_tokens,
          outputTokens: event.total_output_tokens,
          cost: event.cost ?? state.counters.cost // the session's running total, not this call's
        }
      };
    case 'compacted':
      return note(state, event.message || `compacted: ${event.before} → ${event.after} messages`);
    case 'context_note':
      return note(state, contextNoteLine(event));
    case 'checkpoint':
      return checkpoint(state, event);
    case 'error':
      return note(state, event.message, 'error');
    case 'turn_end':
      return endTurn(state, event.reason, event.text);
    default:
      return state;
  }
}

/** Abort (the button or Escape) ends the turn and drops the queued prompts, at once in the view. */
export function clearQueue(state: PanelState): PanelState {
  return state.queue.length ? { ...state, queue: [] } : state;
}

/** Turn stored messages into transcript items (history of a resumed session). */
export function appendMessages(state: PanelState, messages: StoredMessage[]): PanelState {
  let s = state;
  for (const m of messages) {
    if (m.role === 'user') {
      s = m.summary ? note(s, 'Earlier messages were summarised.') : push(s, { kind: 'user', text: m.content });
    } else if (m.role === 'assistant') {
      if (m.reasoning) {
        s = push(s, { kind: 'reasoning', text: m.reasoning, streaming: false });
      }
      if (m.content) {
        s = push(s, { kind: 'assistant', text: m.content, streaming: false });
      }
      for (const call of m.tool_calls ?? []) {
        s = { ...s, items: [...s.items, storedTool(call.id, call.name, call.arguments)] };
      }
    } else if (m.role === 'tool' && m.tool_call_id) {
      const isError = Boolean(m.is_error);
      s = upsertTool(s, m.tool_call_id, m.name ?? '', t => ({
        ...t,
        output: m.content,
        isError,
        status: isError ? 'failed' : 'done'
      }));
    }
  }
  return s;
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

// ---------------------------------------------------------------- helpers

/** A turn's checkpoint: one item per turn, updated in place when it is undone or redone. */
function checkpoint(state: PanelState, event: Extract<AgentEvent, { type: 'checkpoint' }>): PanelState {
  if (event.action === 'diverged') {
    return note(state, `changed since the last checkpoint: ${event.files.join(', ')}`);
  }
  const targets = { ...state, undoTurn: event.undo_turn, redoTurn: event.redo_turn };
  const undone = event.action === 'undone';
  const index = state.items.findIndex(i => i.kind === 'checkpoint' && i.turn === event.turn);
  if (index >= 0) {
    const items = state.items.slice();
    items[index] = { ...(items[index] as CheckpointItem), files: event.files, undone };
    return { ...targets, items };
  }
  const seq = state.seq + 1;
  const item: CheckpointItem = { kind: 'checkpoint', id: `i${seq}`, turn: event.turn, files: event.files, undone };
  return { ...targets, seq, items: [...state.items, item] };
}

type NewItem = Omit<UserItem, 'id'> | Omit<AssistantItem, 'id'> | Omit<ReasoningItem, 'id'> | Omit<NoteItem, 'id'>;

function push(state: PanelState, item: NewItem): PanelState {
  const seq = state.seq + 1;
  return { ...state, seq, items: [...state.items, { ...item, id: `i${seq}` } as Item] };
}

function note(state: PanelState, text: string, tone: 'info' | 'error' = 'info'): PanelState {
  return push(state, { kind: 'note', text, tone });
}

/** A delta joins the last item when it is the same kind and still streaming, else starts one. */
function appendStreaming(state: PanelState, kind: 'assistant' | 'reasoning', text: string): PanelState {
  const last = state.items[state.items.length - 1];
  if (last && last.kind === kind && last.streaming) {
    const items = state.items.slice(0, -1);
    items.push({ ...last, text: last.text + text });
    return { ...state, items };
  }
  return push(finishStreaming(state), { kind, text, streaming: true });
}

function finishStreaming(state: PanelState): PanelState {
  const last = state.items[state.items.length - 1];
  if (last && (last.kind === 'assistant' || last.kind === 'reasoning') && last.streaming) {
    return { ...state, items: [...state.items.slice(0, -1), { ...last, streaming: false }] };
  }
  return state;
}

function upsertTool(state: PanelState, callId: string, name: string, change: (t: ToolItem) => ToolItem): PanelState {
  const index = state.items.findIndex(i => i.kind === 'tool' && i.id === callId);
  if (index < 0) {
    const fresh = change(newTool(callId, name));
    return { ...finishStreaming(state), items: [...finishStreaming(state).items, fresh] };
  }
  const items = state.items.slice();
  items[index] = change(items[index] as ToolItem);
  return { ...state, items };
}

function newTool(callId: string, name: string): ToolItem {
  return {
    kind: 'tool',
    id: callId,
    name,
    argsText: '',
    args: null,
    status: 'input',
    output: '',
    isError: false,
    durationMs: null,
    diff: null,
    decision: null
  };
}

function storedTool(callId: string, name: string, argsText: string): ToolItem {
  let args: Record<string, unknown> | null = null;
  try {
    args = JSON.parse(argsText || '{}');
  } catch {
    args = null; // malformed arguments are kept as text
  }
  return { ...newTool(callId, name), argsText, args, status: 'running' };
}

function toolStatus(status: string, isError: boolean): ToolStatus {
  if (status === 'done' || status === 'failed' || status === 'denied' || status === 'killed') {
    return status;
  }
  return isError ? 'failed' : 'done';
}

function endTurn(state: PanelState, reason: string, text: string): PanelState {
  let s: PanelState = finishStreaming({ ...state, busy: false, inFlight: null, approvals: [] });
  // Calls cut short by the end of the turn (abort) never get a result: say so on their rows.
  s = {
    ...s,
    items: s.items.map(i =>
      i.kind === 'tool' && (i.status === 'input' || i.status === 'running' || i.status === 'awaiting')
        ? { ...i, status: 'killed' as const }
        : i
    )
  };
  if (!state.turnHadText && text) {
    s = push(s, { kind: 'assistant', text, streaming: false });
  }
  if (reason === 'aborted') {
    s = note(clearQueue(s), 'Turn aborted.');
  } else if (reason === 'max_steps') {
    s = note(s, 'Stopped: the step limit for one turn was reached.');
  }
  return { ...s, turnHadText: false };
}

function removeFirst(list: string[], value: string): string[] {
  const index = list.indexOf(value);
  return index < 0 ? list : [...list.slice(0, index), ...list.slice(index + 1)];
}

export function normalizeTodos(raw: Array<Record<string, unknown>>): Todo[] {
  return (raw ?? []).map(t => ({
    text: String(t.content ?? t.text ?? ''),
    status: String(t.status ?? 'pending'),
    note: t.note ? String(t.note) : null
  }));
}
