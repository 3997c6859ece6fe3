/**
 * The WebSocket's own frames around the events, and what GET .../messages returns: the few wire
 * types that are not engine dataclasses (those are generated into events.ts by scripts/gen_types.py).
 */

import type { AgentEvent, AgentState, ApprovalMode, Decision } from './events';

export type { ApprovalMode, Decision } from './events';
export { APPROVAL_MODES } from './vocabulary';

/** Sent by the server first on every WebSocket: the agent's state (Agent.snapshot()); events follow. */
export interface Snapshot {
  type: 'snapshot';
  state: AgentState;
}

/** What the server sends: the snapshot, then events (one JSON object per line of a frame). */
export type ServerMessage = Snapshot | AgentEvent;

/** What the panel sends over the WebSocket. */
export type ClientMessage =
  | {
      type: 'prompt';
      text: string;
      /** What is open; ``output``: the number of the cell's output that ``attach`` holds. */
      context?: { notebook: string | null; cell_id: string | null; selection: string | null; output?: number };
      /** Notebook outputs as nbformat keeps them (Explain / Ask / Fix on an output). */
      attach?: Array<Record<string, unknown>>;
    }
  | { type: 'approval'; call_id: string; decision: Decision }
  | { type: 'stop' }
  | { type: 'abort' }
  | { type: 'undo'; turn?: number; force?: boolean }
  | { type: 'redo'; turn?: number; force?: boolean }
  | { type: 'replay'; turn: number }
  | { type: 'settings'; model?: string; approval?: ApprovalMode; toolsets?: string[]; review_before_writing?: boolean };


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
