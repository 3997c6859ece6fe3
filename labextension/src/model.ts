/**
 * The panel's model: the current session's socket, the reducer's state, the session list and
 * the prompt history. The React view only reads it and calls its methods.
 */

import { ISignal, Signal } from '@lumino/signaling';

import { api, AgentSettings, ModelChoices, SessionInfo, SessionSocket, ServerMessage, SocketStatus } from './api';
import type { ApprovalMode, Decision } from './protocol';
import { AgentState, initialState, reduce } from './state';
import { newHistory, PromptHistory, remember } from './input';
import type { OpenContextTracker } from './openContext';
import type { OutputAttachment } from './outputActions';

const HISTORY_KEY = 'nbagent:prompt-history';
const LAST_SESSION_KEY = 'nbagent:last-session';

export class PanelModel {
  /** The session's AgentState: the server's snapshot, then every event through the shared reducer. */
  state: AgentState = initialState();
  sessions: SessionInfo[] = [];
  connection: SocketStatus = 'closed';
  problem: string | null = null;
  history: PromptHistory = newHistory(loadJSON<string[]>(HISTORY_KEY, []));
  private socket: SessionSocket | null = null;
  private changedSignal = new Signal<this, void>(this);
  /** What is open in JupyterLab, sent with each prompt (see openContext.tsx). */
  openContext: OpenContextTracker | null = null;
  /** A notebook output the user attached (Explain / Ask / Fix on it), sent with the next prompt. */
  attachment: OutputAttachment | null = null;
  private pending = false;
  /** What the model picker offers (GET models); null until asked. */
  models: ModelChoices | null = null;
  /** Told of the session's events that change what there is to review (review.ts). */
  onReviewEvent: ((type: string) => void) | null = null;
  /** Writes the user's defaults (JupyterLab's settings registry); null without a registry. */
  saveDefaults: ((values: Partial<AgentSettings>) => Promise<void>) | null = null;

  get changed(): ISignal<this, void> {
    return this.changedSignal;
  }

  /** Open the last session used in this browser, or the newest one, or a new one. */
  async start(): Promise<void> {
    await this.refreshSessions();
    const last = localStorage.getItem(LAST_SESSION_KEY);
    const known = this.sessions.find(s => s.id === last) ?? this.sessions[0];
    if (known) {
      this.open(known.id);
    } else {
      await this.newSession();
    }
  }

  async refreshSessions(): Promise<void> {
    await this.guard(async () => {
      this.sessions = await api.listSessions();
    });
  }

  open(sessionId: string): void {
    this.socket?.close();
    this.state = initialState(sessionId);
    localStorage.setItem(LAST_SESSION_KEY, sessionId);
    this.socket = new SessionSocket(sessionId, msg => this.receive(msg), status => {
      this.connection = status;
      if (status === 'gone') {
        this.problem = 'This session no longer exists (it was deleted elsewhere): pick another from the session list or start a new one.';
        void this.refreshSessions();
      }
      this.emit();
    });
    this.emit();
  }

  async newSession(): Promise<void> {
    await this.guard(async () => {
      const info = await api.createSession();
      await this.refreshSessions();
      this.open(info.id);
    });
  }

  async fork(): Promise<void> {
    const id = this.state.session_id;
    if (!id) {
      return;
    }
    await this.guard(async () => {
      const info = await api.forkSession(id);
      await this.refreshSessions();
      this.open(info.id);
    });
  }

  async deleteCurrent(): Promise<void> {
    const id = this.state.session_id;
    if (!id) {
      return;
    }
    await this.guard(async () => {
      this.socket?.close();
      this.socket = null;
      await api.deleteSession(id);
      localStorage.removeItem(LAST_SESSION_KEY);
      await this.start();
    });
  }

  send(text: string): void {
    if (!text.trim() || !this.socket) {
      return;
    }
    this.history = remember(this.history, text);
    saveJSON(HISTORY_KEY, this.history.entries);
    const a = this.attachment;
    if (a) {
      // The output's own cell and notebook, whatever is active now; the output follows as attachment 1.
      const context = { notebook: a.notebook, cell_id: a.cellId, selection: null, output: a.index };
      this.socket.send({ type: 'prompt', text, context, attach: [a.output] });
      this.attachment = null;
    } else {
      const context = this.openContext?.current;
      this.socket.send(context ? { type: 'prompt', text, context } : { type: 'prompt', text });
    }
    this.emit();
  }

  /** Attach ``attachment`` to the next prompt (null: attach nothing). */
  attach(attachment: OutputAttachment | null): void {
    this.attachment = attachment;
    this.emit();
  }

  setHistory(history: PromptHistory): void {
    this.history = history;
  }

  decide(callId: string, decision: Decision): void {
    this.socket?.send({ type: 'approval', call_id: callId, decision });
  }

  /** Undo (or redo) the file changes of ``turn``; the server's checkpoint event updates every tab. */
  undo(turn: number): void {
    this.socket?.send({ type: 'undo', turn });
  }

  redo(turn: number): void {
    this.socket?.send({ type: 'redo', turn });
  }

  /** Restart and replay the plan ``turn``'s undo offered (after the user confirmed); `kernel_replayed` reports it. */
  replay(turn: number): void {
    this.socket?.send({ type: 'replay', turn });
  }

  /** Kill the command in flight; the turn goes on. */
  stop(): void {
    this.socket?.send({ type: 'stop' });
  }

  /** End the turn and drop the queue (every dropped prompt's turn_end clears it in every tab). */
  abort(): void {
    this.socket?.send({ type: 'abort' });
  }

  /** Change this session's model, approval mode, tool sets or review before writing now (Agent.reconfigure
   * on the server, as the kernel's `%agent --model/--approval/--review` does); its settings_changed event
   * updates every tab. */
  reconfigure(changes: {
    model?: string;
    approval?: ApprovalMode;
    toolsets?: string[];
    review_before_writing?: boolean;
  }): void {
    this.socket?.send({ type: 'settings', ...changes });
  }

  /** The model names to offer: the configured ones and the endpoint's list. */
  async loadModels(): Promise<void> {
    await this.guard(async () => {
      this.models = await api.models();
    });
  }

  /** Keep this session's model, approval mode and tool sets as the user's defaults for new sessions. */
  async keepAsDefaults(): Promise<void> {
    const { model, approval, toolsets } = this.state.settings as Partial<AgentSettings>;
    const save = this.saveDefaults;
    if (save) {
      // The settings schema lists the built-in tool sets; an MCP server's stays a per-session choice.
      const builtIn = toolsets?.filter(t => !t.startsWith('mcp:'));
      await this.guard(() => save({ model: model || null, approval, toolsets: builtIn }));
    }
  }

  applySettings(settings: Partial<AgentSettings>): Promise<AgentSettings | void> {
    return this.guard(() => api.putSettings(settings));
  }

  dispose(): void {
    this.socket?.close();
    this.socket = null;
  }

  private receive(msg: ServerMessage): void {
    if (msg.type === 'snapshot') {
      this.state = msg.state;
    } else {
      this.state = reduce(this.state, msg);
      if (msg.type === 'turn_start' || msg.type === 'turn_end') {
        void this.refreshSessions(); // a new title, turn counts
      }
      if (msg.type === 'turn_end' || msg.type === 'checkpoint' || msg.type === 'changes') {
        this.onReviewEvent?.(msg.type);
      }
    }
    this.emit();
  }

  /** Coalesce bursts of deltas into one repaint per animation frame. */
  private emit(): void {
    if (this.pending) {
      return;
    }
    this.pending = true;
    requestAnimationFrame(() => {
      this.pending = false;
      this.changedSignal.emit();
    });
  }

  private async guard<T>(work: () => Promise<T>): Promise<T | void> {
    try {
      const result = await work();
      this.problem = null;
      return result;
    } catch (err) {
      this.problem = err instanceof Error ? err.message : String(err);
    } finally {
      this.emit();
    }
  }
}

function loadJSON<T>(key: string, fallback: T): T {
  try {
    const raw = localStorage.getItem(key);
    return raw ? (JSON.parse(raw) as T) : fallback;
  } catch {
    return fallback; // a corrupt entry is not worth failing the panel for
  }
}

function saveJSON(key: string, value: unknown): void {
  try {
    localStorage.setItem(key, JSON.stringify(value));
  } catch {
    // storage full or disabled: history is a convenience
  }
}
