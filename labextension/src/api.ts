/**
 * Talking to the server extension: REST under /nbagent/api/ and one WebSocket per session.
 * ServerConnection adds the token and the XSRF header, so Jupyter's auth rules apply as they are.
 */

import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

import type { ApprovalMode, ClientMessage, ServerMessage, StoredMessage } from './protocol';

export type { ServerMessage } from './protocol';

export interface SessionInfo {
  id: string;
  title: string | null;
  model: string;
  provider: string;
  origin: string;
  created: number;
  updated: number;
  turns: number;
  input_tokens: number;
  output_tokens: number;
  cost: number | null;
  parent_id: string | null;
  forked_at_turn: number | null;
  open: boolean;
  busy: boolean;
}

export interface MemoryEntry {
  id: number;
  kind: string;
  text: string;
  hits: number;
  created: number;
  used: number | null;
}

/** A row of GET sessions/<id>/messages: the stored message with its index and turn. */
export interface MessageRow {
  idx: number;
  turn: number;
  created: number;
  message: StoredMessage;
}

export interface AgentSettings {
  model: string | null;
  toolsets: string[];
  approval: ApprovalMode;
}

export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number
  ) {
    super(message);
  }
}

export async function request<T>(path: string, init: RequestInit = {}): Promise<T> {
  const settings = ServerConnection.makeSettings();
  const url = URLExt.join(settings.baseUrl, 'nbagent', 'api', path);
  const response = await ServerConnection.makeRequest(url, init, settings);
  const text = await response.text();
  const data = text ? JSON.parse(text) : null;
  if (!response.ok) {
    throw new ApiError(data?.message ?? data?.reason ?? response.statusText, response.status);
  }
  return data as T;
}

const json = (method: string, body: unknown): RequestInit => ({ method, body: JSON.stringify(body) });

export const api = {
  listSessions: () => request<{ sessions: SessionInfo[] }>('sessions').then(r => r.sessions),
  createSession: () => request<SessionInfo>('sessions', json('POST', {})),
  deleteSession: (id: string) => request<null>(`sessions/${id}`, { method: 'DELETE' }),
  forkSession: (id: string, upToTurn?: number) =>
    request<SessionInfo>(`sessions/${id}/fork`, json('POST', upToTurn === undefined ? {} : { up_to_turn: upToTurn })),
  messages: (id: string) => request<{ messages: MessageRow[] }>(`sessions/${id}/messages`).then(r => r.messages),
  files: (q: string, limit = 20) =>
    request<{ files: string[] }>(`files?${new URLSearchParams({ q, limit: String(limit) })}`).then(r => r.files),
  memory: () => request<{ entries: MemoryEntry[] }>('memory').then(r => r.entries),
  forget: (text: string) => request<{ removed: MemoryEntry[] }>('memory/forget', json('POST', { text })).then(r => r.removed),
  getSettings: () => request<AgentSettings & { available: { toolsets: string[]; approval: string[] } }>('settings'),
  putSettings: (s: Partial<AgentSettings>) => request<AgentSettings>('settings', json('PUT', s)),
  models: () => request<ModelChoices>('models'),
  checkNotebook: (path: string) => request<CheckResult>('check', json('POST', { path }))
};

/** GET models: configured names first, then the endpoint's /models list; ``problem`` says why that is missing. */
export interface ModelChoices {
  models: string[];
  endpoint: string;
  problem: string | null;
}

/** The notebook check's answer (POST /nbagent/api/check): the report as nbagent check prints it. */
export interface CheckResult {
  path: string;
  clean: boolean;
  text: string;
}

export type SocketStatus = 'connecting' | 'open' | 'closed' | 'gone';

/**
 * After a drop: reconnect, unless the session no longer exists (deleted in another tab or from the
 * CLI), where retrying would go on forever. A failed check (the server is restarting) means retry.
 */
export async function afterDrop(sessionId: string, list: () => Promise<SessionInfo[]>): Promise<'retry' | 'gone'> {
  try {
    const sessions = await list();
    return sessions.some(s => s.id === sessionId) ? 'retry' : 'gone';
  } catch {
    return 'retry';
  }
}

/**
 * One session's WebSocket. It reconnects after a drop (each connection starts with a snapshot,
 * so nothing is lost), stops when the session is gone, and stops for good on close().
 */
export class SessionSocket {
  private ws: WebSocket | null = null;
  private closed = false;
  private retry = 0;
  private outbox: ClientMessage[] = [];

  constructor(
    readonly sessionId: string,
    private readonly onMessage: (msg: ServerMessage) => void,
    private readonly onStatus: (status: SocketStatus) => void
  ) {
    this.connect();
  }

  send(msg: ClientMessage): void {
    if (this.ws?.readyState === WebSocket.OPEN) {
      this.ws.send(JSON.stringify(msg));
    } else {
      this.outbox.push(msg);
    }
  }

  close(): void {
    this.closed = true;
    this.ws?.close();
  }

  private connect(): void {
    const settings = ServerConnection.makeSettings();
    let url = URLExt.join(settings.wsUrl, 'nbagent', 'api', 'sessions', this.sessionId, 'ws');
    if (settings.token) {
      url += `?token=${encodeURIComponent(settings.token)}`;
    }
    this.onStatus('connecting');
    const ws = new settings.WebSocket(url);
    this.ws = ws;
    ws.onopen = () => {
      this.retry = 0;
      this.onStatus('open');
      for (const msg of this.outbox.splice(0)) {
        ws.send(JSON.stringify(msg));
      }
    };
    // A frame carries one or more events, one JSON object per line.
    ws.onmessage = ev => {
      for (const line of (ev.data as string).split('\n')) {
        this.onMessage(JSON.parse(line));
      }
    };
    ws.onclose = async () => {
      this.onStatus('closed');
      if (this.closed) {
        return;
      }
      if ((await afterDrop(this.sessionId, api.listSessions)) === 'gone') {
        this.closed = true;
        this.onStatus('gone');
        return;
      }
      // Back off 0.5 s, 1 s, 2 s ... up to 10 s: a restarting server is not hammered.
      const delay = Math.min(10_000, 500 * 2 ** this.retry++);
      window.setTimeout(() => !this.closed && this.connect(), delay);
    };
  }
}
