/**
 * The engine's events as they arrive over the WebSocket (nbagent/events.py, `to_dict()`).
 * Field names are the Python dataclasses' names, unchanged.
 */

export interface BaseEvent {
  type: string;
  turn_id: string;
}

export interface TurnStart extends BaseEvent {
  type: 'turn_start';
  prompt: string;
  session_id: string | null;
}
export interface PromptQueued extends BaseEvent {
  type: 'prompt_queued';
  prompt: string;
  position: number;
}
export interface ReasoningDelta extends BaseEvent {
  type: 'reasoning_delta';
  text: string;
}
export interface TextDelta extends BaseEvent {
  type: 'text_delta';
  text: string;
}
export interface ToolInputStart extends BaseEvent {
  type: 'tool_input_start';
  name: string;
  call_id: string;
}
export interface ToolInputDelta extends BaseEvent {
  type: 'tool_input_delta';
  name: string;
  call_id: string;
  text: string;
}
export interface ToolCall extends BaseEvent {
  type: 'tool_call';
  name: string;
  call_id: string;
  arguments: Record<string, unknown>;
}
export interface ApprovalRequest extends BaseEvent {
  type: 'approval_request';
  name: string;
  call_id: string;
  arguments: Record<string, unknown>;
  diff: string | null;
  /** An MCP tool's hints as its server declares them (readOnlyHint, destructiveHint, ...): shown, never trusted. */
  annotations?: Record<string, unknown> | null;
}
export interface ApprovalDecision extends BaseEvent {
  type: 'approval_decision';
  name: string;
  call_id: string;
  decision: string;
  by: string;
}
export interface ToolResult extends BaseEvent {
  type: 'tool_result';
  name: string;
  call_id: string;
  output: string;
  is_error: boolean;
  status: 'done' | 'failed' | 'denied' | 'killed' | string;
  duration_ms: number;
}
export interface TodosChanged extends BaseEvent {
  type: 'todos_changed';
  todos: Array<Record<string, unknown>>;
}
export interface MemoryChanged extends BaseEvent {
  type: 'memory_changed';
  action: string;
  entries: Array<Record<string, unknown>>;
}
export interface Usage extends BaseEvent {
  type: 'usage';
  input_tokens: number;
  output_tokens: number;
  total_input_tokens: number;
  total_output_tokens: number;
  cost: number | null;
}
export interface Compacted extends BaseEvent {
  type: 'compacted';
  before: number;
  after: number;
  message: string;
}
export interface ContextNote extends BaseEvent {
  type: 'context_note';
  source: string;
  note_id: string;
  change: 'attached' | 'updated' | 'failing' | 'removed' | string;
  summary: string;
  changes: number;
  text: string;
  session_id: string;
}
export interface Checkpoint extends BaseEvent {
  type: 'checkpoint';
  action: 'taken' | 'undone' | 'redone' | 'diverged' | string;
  turn: number;
  files: string[];
  undo_turn: number | null;
  redo_turn: number | null;
}
export interface TurnEnd extends BaseEvent {
  type: 'turn_end';
  reason: 'done' | 'aborted' | 'error' | 'max_steps' | string;
  text: string;
  steps: number;
}
export interface ErrorEvent extends BaseEvent {
  type: 'error';
  message: string;
  kind: string;
  status_code: number | null;
}

export type AgentEvent =
  | TurnStart
  | PromptQueued
  | ReasoningDelta
  | TextDelta
  | ToolInputStart
  | ToolInputDelta
  | ToolCall
  | ApprovalRequest
  | ApprovalDecision
  | ToolResult
  | TodosChanged
  | MemoryChanged
  | Usage
  | Compacted
  | ContextNote
  | Checkpoint
  | TurnEnd
  | ErrorEvent;

/** A stored message (docs/internals.md, "Messages"), as GET .../messages returns them. */
export interface StoredMessage {
  role: 'user' | 'assistant' | 'tool' | string;
  content: string;
  reasoning?: string;
  summary?: boolean;
  tool_calls?: Array<{ id: string; name: string; arguments: string }>;
  tool_call_id?: string;
  name?: string;
  is_error?: boolean;
}

/** What the panel sends over the WebSocket. */
export type ClientMessage =
  | { type: 'prompt'; text: string; context?: { notebook: string | null; cell_id: string | null; selection: string | null } }
  | { type: 'approval'; call_id: string; decision: 'approve' | 'deny' | 'always' }
  | { type: 'stop' }
  | { type: 'abort' }
  | { type: 'undo'; turn?: number; force?: boolean }
  | { type: 'redo'; turn?: number; force?: boolean };
