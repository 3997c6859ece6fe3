/**
 * Inline completions: a provider for JupyterLab's own inline completer (its ghost text, and its keys
 * to accept, cycle and dismiss), backed by POST /nbagent/api/complete.
 *
 * JupyterLab calls `fetch` on every keystroke (its own debouncer is left at 0): the provider waits
 * `debounceMs` of quiet itself, so that the next keystroke can abort the HTTP request in flight with
 * it (one request per editor at most). `fetch` returns as soon as the server answers with headers, an
 * empty item marked incomplete; JupyterLab then calls `stream`, which reads the newline-delimited JSON
 * pieces into the ghost text as they come.
 */

import { URLExt } from '@jupyterlab/coreutils';
import type {
  CompletionHandler,
  IInlineCompletionContext,
  IInlineCompletionItem,
  IInlineCompletionList,
  IInlineCompletionProvider
} from '@jupyterlab/completer';
import { ServerConnection } from '@jupyterlab/services';

export type CompletionMode = 'auto' | 'on' | 'off';

export interface CompletionSettings {
  /** "auto": as the server's configuration says (off for the offline model); "on"; "off". */
  enabled: CompletionMode;
  debounceMs: number;
  /** A model for completions only; empty: the server's completion_model, else the agent's model. */
  model: string | null;
}

export const DEFAULT_SETTINGS: CompletionSettings = { enabled: 'auto', debounceMs: 250, model: null };

/** What one editor has in flight: the debounce timer or the request, and its abort. */
interface Flight {
  controller: AbortController;
  timer: ReturnType<typeof setTimeout> | null;
  wake: (() => void) | null;
}

/** One answer being read: its body's reader and the text so far. */
interface Answer {
  reader: ReadableStreamDefaultReader<Uint8Array>;
  controller: AbortController;
}

const EMPTY: IInlineCompletionList = { items: [] };

export class NbagentInlineProvider implements IInlineCompletionProvider {
  readonly name = 'nbagent';
  readonly identifier = 'nbagent';
  settings: CompletionSettings = { ...DEFAULT_SETTINGS };
  /** Why the server said completions are off (409), so that typing stops asking. */
  offReason: string | null = null;
  /** Requests sent: the figures count them per keystroke. */
  sent = 0;
  private flights = new WeakMap<object, Flight>();
  private answers = new Map<string, Answer>();
  private nextToken = 0;

  configureWith(settings: Partial<CompletionSettings>): void {
    this.settings = { ...DEFAULT_SETTINGS, ...settings };
    this.offReason = null; // a changed setting may have turned them on: ask again
  }

  async fetch(request: CompletionHandler.IRequest, context: IInlineCompletionContext): Promise<IInlineCompletionList> {
    const widget = context.widget as unknown as object;
    this.flights.get(widget)?.controller.abort(); // the previous keystroke's request or debounce
    if (this.settings.enabled === 'off' || this.offReason !== null) {
      return EMPTY;
    }
    const flight: Flight = { controller: new AbortController(), timer: null, wake: null };
    this.flights.set(widget, flight);
    if (!(await debounce(flight, this.settings.debounceMs))) {
      return EMPTY;
    }
    mark('nbagent-complete:debounced');
    const body = requestBody(request, context, this.settings);
    if (body === null) {
      return EMPTY;
    }
    try {
      return await this.send(body, flight);
    } catch {
      return EMPTY; // aborted by the next keystroke, or the server is away: no ghost text
    }
  }

  async *stream(token: string): AsyncGenerator<{ response: IInlineCompletionItem }> {
    const answer = this.answers.get(token);
    if (!answer) {
      return;
    }
    const decoder = new TextDecoder();
    let text = '';
    let buffered = '';
    let first = true;
    try {
      for (;;) {
        const { done, value } = await answer.reader.read();
        if (done) {
          break;
        }
        buffered += decoder.decode(value, { stream: true });
        const lines = buffered.split('\n');
        buffered = lines.pop() ?? '';
        const pieces = lines.map(parseLine).filter((p): p is { text?: string; error?: string } => p !== null);
        const added = pieces.map(p => p.text ?? '').join('');
        if (added) {
          if (first) {
            mark('nbagent-complete:first-piece');
            first = false;
          }
          text += added;
          yield { response: { insertText: text, isIncomplete: true, token } };
        }
      }
    } catch {
      // aborted: the ghost text keeps what came
    } finally {
      this.answers.delete(token);
    }
    yield { response: { insertText: text, isIncomplete: false } };
  }

  private async send(body: Record<string, unknown>, flight: Flight): Promise<IInlineCompletionList> {
    const settings = ServerConnection.makeSettings();
    const url = URLExt.join(settings.baseUrl, 'nbagent', 'api', 'complete');
    this.sent += 1;
    const response = await ServerConnection.makeRequest(
      url,
      { method: 'POST', body: JSON.stringify(body), signal: flight.controller.signal },
      settings
    );
    if (response.status === 409) {
      const answer = (await response.json().catch(() => ({}))) as { off?: string };
      this.offReason = answer.off ?? 'completions are off';
      return EMPTY;
    }
    if (!response.ok || !response.body) {
      return EMPTY;
    }
    const token = `nbagent-${++this.nextToken}`;
    this.answers.set(token, { reader: response.body.getReader(), controller: flight.controller });
    return { items: [{ insertText: '', isIncomplete: true, token }] };
  }
}

/** Wait `ms` unless the flight is aborted first; true when the wait ran out (time to ask). */
function debounce(flight: Flight, ms: number): Promise<boolean> {
  return new Promise(resolve => {
    const signal = flight.controller.signal;
    const onAbort = () => {
      if (flight.timer !== null) {
        clearTimeout(flight.timer);
      }
      resolve(false);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    flight.timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      flight.timer = null;
      resolve(!signal.aborted);
    }, Math.max(0, ms));
  });
}

/** The route's body: the notebook's path and cell (duck-typed: a NotebookPanel or any document widget). */
export function requestBody(
  request: CompletionHandler.IRequest,
  context: IInlineCompletionContext,
  settings: CompletionSettings
): Record<string, unknown> | null {
  const widget = context.widget as unknown as {
    context?: { path?: string };
    content?: { activeCell?: { model?: { id?: string } } };
  };
  const path = widget.context?.path;
  if (!path) {
    return null; // a console or an editor without a file: nothing to place the completion in
  }
  const body: Record<string, unknown> = {
    path,
    prefix: request.text.slice(0, request.offset),
    suffix: request.text.slice(request.offset)
  };
  const cellId = widget.content?.activeCell?.model?.id;
  if (cellId) {
    body.cell_id = cellId;
  }
  if (settings.model) {
    body.model = settings.model;
  }
  if (settings.enabled === 'on') {
    body.enabled = 'on';
  }
  return body;
}

function parseLine(line: string): { text?: string; error?: string } | null {
  if (!line.trim()) {
    return null;
  }
  try {
    return JSON.parse(line) as { text?: string; error?: string };
  } catch {
    return null;
  }
}

/** A User Timing mark, only the newest of each name kept (the figures read them; nothing piles up). */
function mark(name: string): void {
  performance.clearMarks(name);
  performance.mark(name);
}
