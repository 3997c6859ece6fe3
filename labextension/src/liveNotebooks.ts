/**
 * Open notebooks for the agent without collaboration: this tab reports which notebooks it has open,
 * and applies the agent's edits to them through the notebook model, then saves (no "File Changed").
 * It also saves when asked, before a turn's checkpoint (outputs reach the file only on a save).
 *
 * The server (nbagent.jupyter.server.views) checks each touched cell's version on a fresh read of
 * this tab and sends the source it checked; the tab compares it with the cell right before writing.
 * Edits change only the differing range of a source (JavaScript offsets are UTF-16 units, which is
 * what the shared model counts here). Moves are a delete plus an insert of a copy.
 */

import type { JupyterFrontEnd } from '@jupyterlab/application';
import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

/** The part of a notebook document widget this module uses (no @jupyterlab/notebook import needed). */
export interface NotebookLike {
  context: {
    path: string;
    model: { toJSON(): unknown; sharedModel: SharedNotebook };
    save(): Promise<void>;
    ready: Promise<void>;
    pathChanged: { connect(fn: () => void): void };
  };
  disposed: { connect(fn: () => void): void };
  isDisposed: boolean;
}

interface SharedCell {
  id: string;
  cell_type: string;
  source: string;
  updateSource(start: number, end: number, value?: string): void;
  toJSON(): Record<string, unknown>;
  setOutputs?(outputs: unknown[]): void;
  execution_count?: number | null;
}

interface SharedNotebook {
  cells: SharedCell[];
  nbformat_minor: number;
  insertCell(index: number, cell: Record<string, unknown>): SharedCell;
  deleteCell(index: number): void;
  transact(f: () => void, undoable?: boolean, origin?: unknown): void;
}

export interface Op {
  op: 'edit' | 'insert' | 'delete' | 'move' | 'outputs';
  cell_id?: string;
  after_cell_id?: string | null;
  source?: string;
  cell_type?: string | null;
  old_text?: string | null;
  cell?: Record<string, unknown>;
  outputs?: unknown[];
  execution_count?: number | null;
  expect?: { cell_type: string; source: string };
}

export class StaleError extends Error {}

export function isNotebook(widget: unknown): widget is NotebookLike {
  const w = widget as { context?: { path?: unknown; model?: { sharedModel?: { cells?: unknown } } } };
  return typeof w?.context?.path === 'string' && Array.isArray(w.context.model?.sharedModel?.cells);
}

function indexOf(nb: SharedNotebook, id: string): number {
  const index = nb.cells.findIndex(c => c.id === id);
  if (index < 0) {
    throw new Error(`no cell with id ${id}`);
  }
  return index;
}

/** Replace ``current`` by ``wanted`` in ``cell`` by their differing middle only. */
export function diffInto(cell: SharedCell, current: string, wanted: string): void {
  let start = 0;
  while (start < current.length && start < wanted.length && current[start] === wanted[start]) {
    start++;
  }
  let end = 0;
  while (
    end < current.length - start &&
    end < wanted.length - start &&
    current[current.length - 1 - end] === wanted[wanted.length - 1 - end]
  ) {
    end++;
  }
  cell.updateSource(start, current.length - end, wanted.slice(start, wanted.length - end));
}

function applyOne(nb: SharedNotebook, op: Op): void {
  if (op.op === 'insert') {
    const index = op.after_cell_id ? indexOf(nb, op.after_cell_id) + 1 : 0;
    nb.insertCell(index, op.cell ?? {});
    return;
  }
  const index = indexOf(nb, op.cell_id ?? '');
  const cell = nb.cells[index];
  if (op.expect && (cell.cell_type !== op.expect.cell_type || cell.source !== op.expect.source)) {
    throw new StaleError(`cell ${op.cell_id} changed`);
  }
  if (op.op === 'delete') {
    nb.deleteCell(index);
  } else if (op.op === 'move') {
    const copy = cell.toJSON();
    nb.deleteCell(index);
    nb.insertCell(op.after_cell_id ? indexOf(nb, op.after_cell_id) + 1 : 0, copy);
  } else if (op.op === 'outputs') {
    cell.setOutputs?.(op.outputs ?? []);
    cell.execution_count = op.execution_count ?? null;
  } else if (op.op === 'edit') {
    editCell(nb, index, cell, op);
  }
}

function editCell(nb: SharedNotebook, index: number, cell: SharedCell, op: Op): void {
  const current = cell.source;
  let wanted = op.source ?? '';
  if (op.old_text !== null && op.old_text !== undefined) {
    const at = current.indexOf(op.old_text);
    if (at < 0 || current.indexOf(op.old_text, at + 1) >= 0) {
      throw new StaleError(`old_text is not unique in cell ${op.cell_id}`);
    }
    wanted = current.slice(0, at) + wanted + current.slice(at + op.old_text.length);
  }
  const type = op.cell_type || cell.cell_type;
  if (type !== cell.cell_type) {
    const json = cell.toJSON();
    nb.deleteCell(index);
    const fresh: Record<string, unknown> = { id: cell.id, cell_type: type, source: wanted, metadata: json.metadata ?? {} };
    if (type === 'code') {
      Object.assign(fresh, { outputs: [], execution_count: null });
    }
    nb.insertCell(index, fresh);
    return;
  }
  diffInto(cell, current, wanted);
  if (type === 'code') {
    cell.setOutputs?.([]);
    cell.execution_count = null;
  }
}

/** Apply the server's operations in one transaction; a stale cell changes nothing. */
export function applyOps(nb: SharedNotebook, ops: Op[]): void {
  for (const op of ops) {
    if (op.op !== 'insert' && op.expect) {
      const cell = nb.cells.find(c => c.id === op.cell_id);
      if (cell && (cell.cell_type !== op.expect.cell_type || cell.source !== op.expect.source)) {
        throw new StaleError(`cell ${op.cell_id} changed`);
      }
    }
  }
  nb.transact(() => {
    for (const op of ops) {
      applyOne(nb, op);
    }
    if (nb.nbformat_minor < 5) {
      nb.nbformat_minor = 5; // keep the ids the agent saw when the notebook is saved
    }
  }, true, 'nbagent');
}

/** Events the server sends on the views socket for the review (not requests: no reply). */
export const REVIEW_EVENTS = ['changes', 'checkpoint', 'turn_end'];

/** Keep a socket to the server for as long as the app runs; reconnect after a drop. ``onEvent`` gets
 * the review's events (REVIEW_EVENTS). */
export function startLiveNotebooks(app: JupyterFrontEnd, onEvent: (type: string) => void = () => undefined): void {
  let ws: WebSocket | null = null;
  let retry = 0;
  const opened = (): NotebookLike[] => {
    const found: NotebookLike[] = [];
    for (const widget of app.shell.widgets('main')) {
      if (isNotebook(widget) && !widget.isDisposed) {
        found.push(widget);
      }
    }
    return found;
  };
  // Only notebooks whose model is loaded are reported; the others are reported once they are ready.
  const notebooks = (): NotebookLike[] =>
    opened().filter(n => (n.context as unknown as { isReady?: boolean }).isReady !== false);
  const report = () => {
    if (ws?.readyState === WebSocket.OPEN) {
      ws.send(JSON.stringify({ type: 'open', paths: notebooks().map(n => n.context.path) }));
    }
  };
  const handle = async (msg: { id: number; type: string; path: string; ops?: Op[] }) => {
    const panel = notebooks().find(n => n.context.path === msg.path);
    const reply: Record<string, unknown> = { type: 'result', id: msg.id };
    try {
      if (!panel) {
        throw new Error(`${msg.path} is not open in this tab`);
      }
      if (msg.type === 'apply') {
        applyOps(panel.context.model.sharedModel, msg.ops ?? []);
        await panel.context.save();
      } else if (msg.type === 'save') {
        // Before a turn's checkpoint: what the user ran or typed is saved as theirs, not the turn's.
        await panel.context.save();
      }
      reply.notebook = panel.context.model.toJSON();
    } catch (err) {
      reply.error = (err as Error).message;
      reply.stale = err instanceof StaleError;
    }
    ws?.send(JSON.stringify(reply));
  };
  const connect = () => {
    const settings = ServerConnection.makeSettings();
    let url = URLExt.join(settings.wsUrl, 'nbagent', 'api', 'views', 'ws');
    if (settings.token) {
      url += `?token=${encodeURIComponent(settings.token)}`;
    }
    const socket = new settings.WebSocket(url);
    ws = socket;
    socket.onopen = () => {
      retry = 0;
      report();
    };
    socket.onmessage = ev => {
      const msg = JSON.parse(ev.data as string);
      if (REVIEW_EVENTS.includes(msg.type)) {
        onEvent(msg.type);
      } else {
        void handle(msg);
      }
    };
    socket.onclose = () => {
      ws = null;
      window.setTimeout(connect, Math.min(10_000, 500 * 2 ** retry++));
    };
  };
  const shell = app.shell as unknown as { layoutModified?: { connect(fn: () => void): void } };
  shell.layoutModified?.connect(() => {
    for (const nb of opened()) {
      watch(nb);
    }
    report();
  });
  const watched = new WeakSet<NotebookLike>();
  const watch = (nb: NotebookLike) => {
    if (!watched.has(nb)) {
      watched.add(nb);
      nb.context.pathChanged.connect(report);
      void nb.context.ready.then(report);
      nb.disposed.connect(() => window.setTimeout(report, 0));
    }
  };
  connect();
}
