/**
 * The side panel's view: React components that render the model's state.
 */

import * as React from 'react';

import { IRenderMimeRegistry, MimeModel } from '@jupyterlab/rendermime';
import { Dialog, ReactWidget, showDialog, UseSignal } from '@jupyterlab/apputils';

import { api } from './api';
import { atToken, AtToken, insertPath, moveSelection, newer, older } from './input';
import { PanelModel } from './model';
import type { Decision } from './events';
import {
  AgentState,
  CheckpointItem,
  diffLines,
  inFlight,
  isBusy,
  looksLikeDiff,
  PendingApproval,
  Row,
  rows,
  Todo,
  todoProgress,
  todosOf,
  ToolItem
} from './state';
import { CheckButton } from './checkButton';
import { CheckpointBar } from './checkpoints';
import { NOTHING_SPOKEN, nextSpoken, Spoken } from './announce';
import { SessionControls } from './controls';
import { Visible } from './hiddenChars';
import { kernelLine } from './kernelChange';
import { MemoryTab } from './memoryTab';
import { isOutsideRequest, SettingsTab } from './settingsTab';
import { ContextChip } from './openContext';
import { contextLabel, splitPrompt } from './promptContext';
import { attachmentImage, attachmentLabel, attachmentText } from './outputActions';
import { ContextChips } from './contextChips';

export const PANEL_ID = 'nbagent-panel';

export class AgentPanel extends ReactWidget {
  constructor(
    readonly model: PanelModel,
    private readonly rendermime: IRenderMimeRegistry
  ) {
    super();
    this.id = PANEL_ID;
    this.addClass('jp-nbagent');
  }

  /** Put the caret in the prompt box (after the panel is shown). */
  focusInput(): void {
    focusPrompt(this.node);
  }

  protected render(): React.ReactElement {
    return (
      <UseSignal signal={this.model.changed}>
        {() => <PanelView model={this.model} rendermime={this.rendermime} />}
      </UseSignal>
    );
  }

  dispose(): void {
    this.model.dispose();
    super.dispose();
  }
}

interface ViewProps {
  model: PanelModel;
  rendermime: IRenderMimeRegistry;
}

const TAB_LABELS = { chat: 'Chat', memory: 'Memory', settings: 'Settings' } as const;

function PanelView({ model, rendermime }: ViewProps): React.ReactElement {
  const s = model.state;
  const todos = todosOf(s);
  const [tab, setTab] = React.useState<Tab>('chat');
  const items = rows(s);
  // Escape anywhere in the panel ends the turn (the prompt box and the @ picker handle their own first).
  const onKeyDown = (e: React.KeyboardEvent) => {
    if (e.key === 'Escape' && !e.defaultPrevented && isBusy(s)) {
      e.preventDefault();
      model.abort();
    }
  };
  return (
    <div className="jp-nbagent-body" onKeyDown={onKeyDown}>
      <Header model={model} />
      {model.problem && <div className="jp-nbagent-problem" role="alert">{model.problem}</div>}
      <Tabs tab={tab} onChange={setTab} />
      <Announcer items={items} liveTurn={s.turn?.turn_id ?? null} />
      {tab === 'memory' && (
        <div role="tabpanel" id="jp-nbagent-tabpanel-memory" aria-labelledby="jp-nbagent-tab-memory" className="jp-nbagent-tabpanel">
          <MemoryTab />
        </div>
      )}
      {tab === 'settings' && (
        <div role="tabpanel" id="jp-nbagent-tabpanel-settings" aria-labelledby="jp-nbagent-tab-settings" className="jp-nbagent-tabpanel">
          <SettingsTab model={model} />
        </div>
      )}
      {tab === 'chat' && <ContextChips sessionId={s.session_id} version={s.transcript.length + (s.turn ? 1 : 0)} />}
      {tab === 'chat' && <Transcript
        items={items}
        rendermime={rendermime}
        renderCheckpoint={item => (
          <CheckpointBar
            key={item.key}
            checkpoint={item}
            undoTurn={s.undo_turn}
            redoTurn={s.redo_turn}
            busy={isBusy(s)}
            onUndo={turn => model.undo(turn)}
            onRedo={turn => model.redo(turn)}
            onReplay={turn => model.replay(turn)}
          />
        )}
      />}
      <Status state={s} connection={model.connection} />
      {todos.length > 0 && <Todos todos={todos} />}
      {s.approvals.map(a => (
        <ApprovalCard key={a.call_id} approval={a} model={model} />
      ))}
      {s.queue.length > 0 && <Queue queue={s.queue.map(q => q.prompt)} />}
      <SessionControls model={model} />
      <PromptBox model={model} />
    </div>
  );
}

type Tab = 'chat' | 'memory' | 'settings';
const TABS: Tab[] = ['chat', 'memory', 'settings'];

/** The tab strip, a WAI-ARIA tab list: the arrow keys move between tabs, Tab leaves the strip. */
function Tabs({ tab, onChange }: { tab: Tab; onChange: (tab: Tab) => void }): React.ReactElement {
  const strip = React.useRef<HTMLDivElement>(null);
  const onKeyDown = (e: React.KeyboardEvent) => {
    const step = { ArrowRight: 1, ArrowLeft: -1 }[e.key];
    if (step) {
      e.preventDefault();
      const next = TABS[(TABS.indexOf(tab) + step + TABS.length) % TABS.length];
      onChange(next);
      strip.current?.querySelector<HTMLButtonElement>(`[data-tab="${next}"]`)?.focus();
    }
  };
  return (
    <div className="jp-nbagent-tabs" role="tablist" aria-label="nbagent views" ref={strip} onKeyDown={onKeyDown}>
      {TABS.map(name => (
        <button
          key={name}
          id={`jp-nbagent-tab-${name}`}
          role="tab"
          aria-selected={tab === name}
          aria-controls={name === 'chat' ? 'jp-nbagent-tabpanel-chat' : `jp-nbagent-tabpanel-${name}`}
          tabIndex={tab === name ? 0 : -1}
          className={`jp-nbagent-tab${tab === name ? ' jp-mod-active' : ''}`}
          data-tab={name}
          onClick={() => onChange(name)}
        >
          {TAB_LABELS[name]}
        </button>
      ))}
    </div>
  );
}

/**
 * The streaming answer for screen readers: a polite live region that receives each finished paragraph
 * of the answers of turns seen running here (not the transcript a snapshot brings), never each token.
 */
function Announcer({ items, liveTurn }: { items: Row[]; liveTurn: string | null }): React.ReactElement {
  const spoken = React.useRef<Spoken>(NOTHING_SPOKEN);
  const watched = React.useRef<string | null>(null);
  if (liveTurn) {
    watched.current = liveTurn;
  }
  const turn = watched.current;
  const answer = turn ? [...items].reverse().find(r => r.kind === 'assistant' && r.key.startsWith(`${turn}:`)) : undefined;
  if (answer && answer.kind === 'assistant') {
    spoken.current = nextSpoken(spoken.current, answer.key, answer.text, answer.streaming);
  }
  return (
    <div className="jp-nbagent-sr-only jp-nbagent-announce" aria-live="polite">
      {spoken.current.text}
    </div>
  );
}

/** Put the caret in the panel's prompt box. */
function focusPrompt(panel: Element | null): void {
  panel?.querySelector<HTMLTextAreaElement>('.jp-nbagent-input textarea')?.focus();
}

function Header({ model }: { model: PanelModel }): React.ReactElement {
  const { state, sessions } = model;
  const c = state.counters;
  return (
    <div className="jp-nbagent-header">
      <select
        className="jp-nbagent-sessions"
        title="Resume a session"
        aria-label="Session"
        value={state.session_id ?? ''}
        onFocus={() => void model.refreshSessions()}
        onChange={e => model.open(e.target.value)}
      >
        {state.session_id && !sessions.some(x => x.id === state.session_id) && (
          <option value={state.session_id}>new session</option>
        )}
        {sessions.map(x => (
          <option key={x.id} value={x.id}>
            {x.title || 'untitled'} · {formatTime(x.updated)}
          </option>
        ))}
      </select>
      <button className="jp-nbagent-new" title="New session" onClick={() => void model.newSession()}>
        New
      </button>
      <button className="jp-nbagent-fork" title="Fork this session" onClick={() => void model.fork()}>
        Fork
      </button>
      <button className="jp-nbagent-delete" title="Delete this session" onClick={() => void confirmDelete(model)}>
        Delete
      </button>
      <span
        className="jp-nbagent-counters"
        title={
          "Tokens in (of which read from the provider's prompt cache, and the estimate for images) / out, " +
          'and cost of this session'
        }
      >
        {formatTokens(c.input_tokens)} in
        {c.cached_tokens > 0 && ` (${formatTokens(c.cached_tokens)} cached)`}
        {(c.image_tokens ?? 0) > 0 && ` (~${formatTokens(c.image_tokens)} images)`} ·{' '}
        {formatTokens(c.output_tokens)} out
        {c.cost !== null && ` · $${c.cost.toFixed(c.cost < 1 ? 4 : 2)}`}
      </span>
    </div>
  );
}

async function confirmDelete(model: PanelModel): Promise<void> {
  const title = model.sessions.find(x => x.id === model.state.session_id)?.title ?? 'this session';
  const result = await showDialog({
    title: 'Delete the session?',
    body: `"${title}" and its messages are removed from the workspace's database.`,
    buttons: [Dialog.cancelButton(), Dialog.warnButton({ label: 'Delete' })]
  });
  if (result.button.accept) {
    await model.deleteCurrent();
  }
}

interface TranscriptProps {
  items: Row[];
  rendermime: IRenderMimeRegistry;
  renderCheckpoint: (item: CheckpointItem) => React.ReactElement;
}

function Transcript({ items, rendermime, renderCheckpoint }: TranscriptProps): React.ReactElement {
  const ref = React.useRef<HTMLDivElement>(null);
  const stick = React.useRef(true);
  // Follow the stream while the reader is at the bottom; leave them alone when they scrolled up.
  React.useLayoutEffect(() => {
    const node = ref.current;
    if (node && stick.current) {
      node.scrollTop = node.scrollHeight;
    }
  });
  const onScroll = () => {
    const node = ref.current!;
    stick.current = node.scrollHeight - node.scrollTop - node.clientHeight < 40;
  };
  return (
    <div
      className="jp-nbagent-transcript"
      ref={ref}
      onScroll={onScroll}
      role="tabpanel"
      id="jp-nbagent-tabpanel-chat"
      aria-labelledby="jp-nbagent-tab-chat"
      tabIndex={0}
    >
      {items.length === 0 && <div className="jp-nbagent-empty">Ask the agent about this workspace. Type @ to mention a file.</div>}
      {items.map(item =>
        item.kind === 'checkpoint' ? renderCheckpoint(item) : <ItemView key={item.key} item={item} rendermime={rendermime} />
      )}
    </div>
  );
}

const ItemView = React.memo(function ItemView({ item, rendermime }: { item: Row; rendermime: IRenderMimeRegistry }) {
  switch (item.kind) {
    case 'user':
      return (
        <div className="jp-nbagent-user">
          {item.text}
          {item.context && (
            <span className="jp-nbagent-added-context" title="Sent with the prompt by nbagent: what was open in JupyterLab">
              {contextLabel(item.context)}
            </span>
          )}
        </div>
      );
    case 'assistant':
      return <Markdown text={item.text} streaming={item.streaming} rendermime={rendermime} />;
    case 'reasoning':
      return (
        <details className="jp-nbagent-reasoning">
          <summary>{item.streaming ? 'Thinking…' : 'Reasoning'}</summary>
          <pre>{item.text}</pre>
        </details>
      );
    case 'tool':
      return <ToolRow tool={item.tool} />;
    case 'note':
      return <div className={`jp-nbagent-note jp-mod-${item.tone}`}>{item.text}</div>;
    case 'checkpoint':
      return null; // rendered by the Transcript's renderCheckpoint (it needs the model)
  }
});

/** Markdown through JupyterLab's rendermime (sanitised); re-rendered at most every 120 ms while streaming. */
function Markdown({ text, streaming, rendermime }: { text: string; streaming: boolean; rendermime: IRenderMimeRegistry }) {
  const host = React.useRef<HTMLDivElement>(null);
  const renderer = React.useMemo(() => rendermime.createRenderer('text/markdown'), [rendermime]);
  const rendered = React.useRef<string | null>(null);
  React.useEffect(() => {
    host.current!.appendChild(renderer.node);
    return () => renderer.dispose();
  }, [renderer]);
  React.useEffect(() => {
    const paint = () => {
      if (rendered.current !== text) {
        rendered.current = text;
        void renderer.renderModel(new MimeModel({ data: { 'text/markdown': text }, trusted: false }));
      }
    };
    if (!streaming) {
      paint();
      return;
    }
    const timer = window.setTimeout(paint, rendered.current === null ? 0 : 120);
    return () => window.clearTimeout(timer);
  }, [text, streaming, renderer]);
  return <div className="jp-nbagent-assistant" ref={host} />;
}

const STATUS_MARK: Record<string, string> = {
  input: '…',
  running: '…',
  awaiting_approval: '?',
  done: '✓',
  failed: '✗',
  denied: '⊘',
  killed: '■',
  interrupted: '■'
};

const STATUS_WORD: Record<string, string> = {
  input: 'being written',
  running: 'running',
  awaiting_approval: 'awaiting approval',
  done: 'done',
  failed: 'failed',
  denied: 'denied',
  killed: 'killed',
  interrupted: 'interrupted'
};

const UNSUCCESSFUL = new Set(['failed', 'denied', 'killed', 'interrupted']);
const REASON_CHARS = 160;

/** Why a call did not succeed, on the row itself (the first line of its result, cut); the whole result is
 * one click away, in the row's body. The same rule as the notebook's tool row (widgets/tools.py). */
export function failureReason(status: string, output: string): string {
  if (!UNSUCCESSFUL.has(status)) {
    return '';
  }
  const first = output.split('\n').map(line => line.trim()).find(line => line) ?? '';
  return first.length <= REASON_CHARS ? first : first.slice(0, REASON_CHARS - 1) + '…';
}

function ToolRow({ tool }: { tool: ToolItem }): React.ReactElement {
  const summary = toolSummary(tool);
  const output = tool.output ?? '';
  const outputIsDiff = looksLikeDiff(output); // the edit's own diff, after the fact
  const status = STATUS_WORD[tool.status] ?? tool.status;
  const reason = failureReason(tool.status, output);
  return (
    <details
      className={`jp-nbagent-tool jp-mod-${tool.status}`}
      data-call-id={tool.call_id}
      aria-label={`Tool ${tool.name}${summary ? ` ${summary}` : ''}: ${status}`}
    >
      <summary>
        <span className="jp-nbagent-tool-mark" aria-hidden="true">{STATUS_MARK[tool.status] ?? '·'}</span>
        <span className="jp-nbagent-sr-only">{status}: </span>
        <span className="jp-nbagent-tool-name">{tool.name}</span>
        {summary && <span className="jp-nbagent-tool-arg">{summary}</span>}
        {tool.duration_ms !== null && <span className="jp-nbagent-tool-time">{formatMs(tool.duration_ms)}</span>}
        {tool.kernel && <div className="jp-nbagent-kernel-change">{kernelLine(tool.kernel)}</div>}
        {reason && <div className="jp-nbagent-tool-reason">{reason}</div>}
      </summary>
      <div className="jp-nbagent-tool-body">
        <pre className="jp-nbagent-tool-args">{prettyArgs(tool)}</pre>
        {outputIsDiff ? <Diff diff={output} /> : tool.diff && <Diff diff={tool.diff} />}
        {output && !outputIsDiff && <pre className="jp-nbagent-tool-output">{output}</pre>}
      </div>
    </details>
  );
}

function Diff({ diff }: { diff: string }): React.ReactElement {
  return (
    <pre className="jp-nbagent-diff">
      {diffLines(diff).map((line, i) => (
        <div key={i} className={`jp-nbagent-diff-${line.kind}`}>
          <Visible text={line.text || ' '} />
        </div>
      ))}
    </pre>
  );
}

function Status({ state, connection }: { state: AgentState; connection: string }): React.ReactElement | null {
  if (connection !== 'open') {
    const label = { connecting: 'Connecting…', gone: 'Session deleted' }[connection] ?? 'Disconnected, reconnecting…';
    return <div className="jp-nbagent-status" role="status">{label}</div>;
  }
  const flying = inFlight(state);
  if (flying) {
    return (
      <div className="jp-nbagent-status jp-nbagent-inflight" role="status">
        <span className="jp-nbagent-spinner" aria-hidden="true" /> running {flying.name}…
      </div>
    );
  }
  if (isBusy(state)) {
    return (
      <div className="jp-nbagent-status" role="status">
        <span className="jp-nbagent-spinner" aria-hidden="true" /> working…
      </div>
    );
  }
  return null;
}

function Todos({ todos }: { todos: Todo[] }): React.ReactElement {
  const { done, total } = todoProgress(todos);
  return (
    <details className="jp-nbagent-todos" open aria-label={`Todo list, ${done} of ${total} done`}>
      <summary>
        Todos {done}/{total}
        <progress max={total} value={done} aria-label={`${done} of ${total} todos done`} />
      </summary>
      <ul aria-label="Todos">
        {todos.map((t, i) => (
          <li key={i} className={`jp-nbagent-todo jp-mod-${t.status}`}>
            <span className="jp-nbagent-todo-mark" aria-hidden="true">{TODO_MARK[t.status] ?? '☐'}</span>
            <span className="jp-nbagent-sr-only">{TODO_WORD[t.status] ?? t.status}: </span>
            {t.text}
            {t.note && <span className="jp-nbagent-todo-note"> ({t.note})</span>}
          </li>
        ))}
      </ul>
    </details>
  );
}

const TODO_MARK: Record<string, string> = { completed: '☑', in_progress: '◐', pending: '☐', blocked: '⚠' };
const TODO_WORD: Record<string, string> = { completed: 'done', in_progress: 'in progress', pending: 'to do', blocked: 'blocked' };

function ApprovalCard({ approval, model }: { approval: PendingApproval; model: PanelModel }): React.ReactElement {
  const card = React.useRef<HTMLDivElement>(null);
  // The card takes the focus when it appears (the card, not Approve: a key meant for the prompt box
  // must not approve anything); Tab then reaches Approve and Deny. After a decision the prompt has it back.
  React.useEffect(() => card.current?.focus(), []);
  const decide = (d: Decision) => () => {
    const panel = card.current?.closest('.jp-nbagent') ?? null;
    model.decide(approval.call_id, d);
    focusPrompt(panel);
  };
  const outside = isOutsideRequest(approval);
  const titleId = `jp-nbagent-approval-title-${approval.call_id}`;
  return (
    <div
      className={`jp-nbagent-approval${outside ? ' jp-mod-outside' : ''}`}
      data-call-id={approval.call_id}
      ref={card}
      tabIndex={-1}
      role="alertdialog"
      aria-labelledby={titleId}
    >
      <div className="jp-nbagent-approval-title" id={titleId}>
        {outside && <span className="jp-nbagent-approval-origin">An outside agent (over MCP) asks: </span>}
        Allow <b><Visible text={approval.name} /></b>?
      </div>
      {approval.diff ? <Diff diff={approval.diff} /> : <pre className="jp-nbagent-tool-args"><Visible text={JSON.stringify(approval.arguments, null, 2)} /></pre>}
      {approval.annotations ? (
        <div className="jp-nbagent-approval-hints" title="What the MCP server says about this tool; nbagent does not rely on it">
          <Visible text={"server's hints (unverified): " + Object.entries(approval.annotations).map(([k, v]) => `${k}=${String(v)}`).join(', ')} />
        </div>
      ) : null}
      <div className="jp-nbagent-approval-buttons">
        <button className="jp-mod-accept" onClick={decide('approve')}>
          Approve
        </button>
        <button className="jp-mod-reject" onClick={decide('deny')}>
          Deny
        </button>
        <button className="jp-mod-always" title={`Approve ${approval.name} for the rest of this session`} onClick={decide('always')}>
          Always
        </button>
      </div>
    </div>
  );
}

/** The output the next prompt attaches (Explain / Ask / Fix on an output): its number and kind, a
 * thumbnail of its image and its text as the tooltip (React puts both in as text, escaped). */
function AttachmentChip({ model }: { model: PanelModel }): React.ReactElement | null {
  const a = model.attachment;
  if (!a) {
    return null;
  }
  const image = attachmentImage(a);
  const text = attachmentText(a);
  return (
    <div
      className="jp-nbagent-context-chip jp-nbagent-attachment-chip"
      title={`Sent with your prompt: ${a.notebook}, cell ${a.cellId}, ${attachmentLabel(a)}${text ? `\n${text}` : ''}`}
    >
      {image && <img src={image} alt={`output ${a.index} of cell ${a.cellId}`} />}
      <span>
        {a.notebook.split('/').pop()} · cell {a.cellId} · {attachmentLabel(a)}
      </span>
      <button aria-label="Do not attach this output" onClick={() => model.attach(null)}>
        ×
      </button>
    </div>
  );
}

function Queue({ queue }: { queue: string[] }): React.ReactElement {
  return (
    <div className="jp-nbagent-queue" role="region" aria-label="Queued prompts">
      <div className="jp-nbagent-queue-title">Queued ({queue.length}) · Esc clears</div>
      {queue.map((q, i) => (
        <div key={i} className="jp-nbagent-queued">
          {splitPrompt(q).typed}
        </div>
      ))}
    </div>
  );
}

interface Picker {
  token: AtToken;
  files: string[];
  selected: number;
}

function PromptBox({ model }: { model: PanelModel }): React.ReactElement {
  const [text, setText] = React.useState('');
  const [picker, setPicker] = React.useState<Picker | null>(null);
  const area = React.useRef<HTMLTextAreaElement>(null);
  const query = React.useRef(0);
  const busy = isBusy(model.state);

  const updatePicker = (value: string, caret: number) => {
    const token = atToken(value, caret);
    if (!token) {
      setPicker(null);
      return;
    }
    const ticket = ++query.current;
    api.files(token.query).then(
      files => ticket === query.current && setPicker({ token, files, selected: 0 }),
      () => ticket === query.current && setPicker(null)
    );
  };

  const choose = (path: string) => {
    const node = area.current!;
    const result = insertPath(text, node.selectionStart, picker!.token, path);
    setText(result.text);
    setPicker(null);
    requestAnimationFrame(() => node.setSelectionRange(result.caret, result.caret));
  };

  const send = () => {
    model.send(text);
    setText('');
    setPicker(null);
  };

  const onKeyDown = (e: React.KeyboardEvent<HTMLTextAreaElement>) => {
    const node = e.currentTarget;
    if (picker && picker.files.length && (e.key === 'ArrowDown' || e.key === 'ArrowUp')) {
      e.preventDefault();
      setPicker({ ...picker, selected: moveSelection(picker.selected, picker.files.length, e.key === 'ArrowDown' ? 1 : -1) });
    } else if (picker && picker.files.length && (e.key === 'Enter' || e.key === 'Tab') && !e.shiftKey) {
      e.preventDefault();
      choose(picker.files[picker.selected]);
    } else if (e.key === 'Escape') {
      e.preventDefault();
      if (picker) {
        setPicker(null);
      } else {
        model.abort();
      }
    } else if (e.key === 'Enter' && !e.shiftKey) {
      e.preventDefault();
      send();
    } else if (e.key === 'ArrowUp' && !node.value.slice(0, node.selectionStart).includes('\n')) {
      const step = older(model.history, node.value);
      if (step) {
        e.preventDefault();
        model.setHistory(step.history);
        setText(step.text);
      }
    } else if (e.key === 'ArrowDown' && !node.value.slice(node.selectionEnd).includes('\n')) {
      const step = newer(model.history);
      if (step) {
        e.preventDefault();
        model.setHistory(step.history);
        setText(step.text);
      }
    }
  };

  return (
    <div className="jp-nbagent-input">
      {picker && (
        <ul className="jp-nbagent-picker" role="listbox" id="jp-nbagent-picker" aria-label="Files" data-query={picker.token.query}>
          {picker.files.length === 0 && <li className="jp-nbagent-picker-empty" role="option" aria-selected={false} aria-disabled="true">no matching files</li>}
          {picker.files.map((f, i) => (
            <li
              key={f}
              id={`jp-nbagent-pick-${i}`}
              role="option"
              aria-selected={i === picker.selected}
              className={i === picker.selected ? 'jp-mod-selected' : ''}
              onMouseDown={e => {
                e.preventDefault(); // keep the focus in the textarea
                choose(f);
              }}
            >
              {f}
            </li>
          ))}
        </ul>
      )}
      {model.attachment ? <AttachmentChip model={model} /> : <ContextChip tracker={model.openContext} />}
      <textarea
        rows={3}
        value={text}
        aria-label="Prompt for the agent"
        aria-autocomplete="list"
        aria-controls={picker ? 'jp-nbagent-picker' : undefined}
        aria-activedescendant={picker?.files.length ? `jp-nbagent-pick-${picker.selected}` : undefined}
        placeholder={busy ? 'Type to queue a prompt… (Esc aborts)' : 'Ask the agent… (Enter sends, Shift+Enter new line, @ file)'}
        onChange={e => {
          setText(e.target.value);
          updatePicker(e.target.value, e.target.selectionStart);
        }}
        onKeyDown={onKeyDown}
        onBlur={() => setPicker(null)}
        ref={area}
      />
      <div className="jp-nbagent-buttons">
        <button className="jp-nbagent-send jp-mod-accept" onClick={send} disabled={!text.trim()}>
          {busy ? 'Queue' : 'Send'}
        </button>
        <button className="jp-nbagent-stop" title="Kill the running command; the turn goes on" onClick={() => model.stop()} disabled={!busy}>
          Stop
        </button>
        <button className="jp-nbagent-abort jp-mod-reject" title="End the turn and clear the queue (Esc)" onClick={() => model.abort()} disabled={!busy && model.state.queue.length === 0}>
          Abort
        </button>
        <CheckButton tracker={model.openContext} />
      </div>
    </div>
  );
}

// ---------------------------------------------------------------- formatting

function toolSummary(tool: ToolItem): string {
  const a = tool.arguments ?? {};
  const main = a.path ?? a.file ?? a.command ?? a.pattern ?? a.query ?? a.cell_id ?? a.code;
  if (typeof main === 'string') {
    const line = main.split('\n')[0];
    return line.length > 60 ? line.slice(0, 59) + '…' : line;
  }
  return '';
}

function prettyArgs(tool: ToolItem): string {
  if (tool.arguments) {
    return JSON.stringify(tool.arguments, null, 2);
  }
  return tool.input_text;
}

function formatMs(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

function formatTokens(n: number): string {
  return n < 1000 ? String(n) : n < 1_000_000 ? `${(n / 1000).toFixed(1)}k` : `${(n / 1_000_000).toFixed(2)}M`;
}

function formatTime(epochSeconds: number | null): string {
  if (!epochSeconds) {
    return '';
  }
  const d = new Date(epochSeconds * 1000);
  const today = new Date().toDateString() === d.toDateString();
  return today ? d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }) : d.toLocaleDateString();
}
