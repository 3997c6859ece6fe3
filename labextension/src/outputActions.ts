/**
 * Explain / Ask / Fix on every output of an open notebook (and every error). Each output gets three
 * small buttons; a click hands the panel that output (as nbformat JSON: its text and its image) and
 * its cell, to attach to a prompt. Explain and Fix send a standard prompt at once, Ask puts the
 * attachment above the prompt box and focuses it.
 *
 * The buttons are added to the DOM JupyterLab renders (one observer per notebook), so they work
 * the same with and without collaboration and whether the notebook renders all its cells or only
 * those in view. What they attach is read from the cell's output model at the click, never from
 * the DOM. Nothing from the notebook is put into the page here but the output's number.
 */

import { isNotebook } from './liveNotebooks';

export type OutputAction = 'explain' | 'ask' | 'fix';

/** A notebook output the user attached to a prompt. */
export interface OutputAttachment {
  notebook: string;
  cellId: string;
  /** The output's number in its cell, 1 = the first. */
  index: number;
  /** The output as nbformat keeps it (output_type, data or text or ename/evalue/traceback). */
  output: Record<string, unknown>;
}

export const ACTION_PROMPTS: Record<Exclude<OutputAction, 'ask'>, { output: string; error: string }> = {
  explain: {
    output: 'Explain this output: what it shows and what stands out.',
    error: 'Explain this error: what went wrong in this cell and why.'
  },
  fix: {
    output: 'This output is not what the cell should give: fix the cell (edit it; do not run anything).',
    error: 'Fix this error: edit the cell so that it runs (do not run anything).'
  }
};

/** The standard prompt of a click (Ask has none: the user types it). */
export function actionPrompt(action: Exclude<OutputAction, 'ask'>, output: Record<string, unknown>): string {
  return ACTION_PROMPTS[action][output.output_type === 'error' ? 'error' : 'output'];
}

const LABELS: Record<OutputAction, string> = { explain: 'Explain', ask: 'Ask', fix: 'Fix' };
const BAR = 'jp-nbagent-output-actions';

interface OutputModelLike {
  length: number;
  get(index: number): { toJSON(): Record<string, unknown> };
}

interface CellLike {
  node: HTMLElement;
  model: { id: string; type?: string; outputs?: OutputModelLike };
}

interface NotebookWidgetLike {
  node: HTMLElement;
  isDisposed: boolean;
  context: { path: string };
  content: { node: HTMLElement; widgets: readonly CellLike[] };
}

type Handler = (action: OutputAction, attachment: OutputAttachment) => void;

/** The attachment for one output node of a notebook, read from its cell's model; null when the
 * node is not (or no longer) one of the cell's outputs. */
export function attachmentFor(notebook: NotebookWidgetLike, child: HTMLElement): OutputAttachment | null {
  const cell = notebook.content.widgets.find(c => c.node.contains(child));
  const outputs = cell?.model.outputs;
  const area = child.parentElement;
  if (!cell || !outputs || !area) {
    return null;
  }
  const index = Array.from(area.children).filter(n => n.classList.contains('jp-OutputArea-child')).indexOf(child);
  if (index < 0 || index >= outputs.length) {
    return null;
  }
  return { notebook: notebook.context.path, cellId: cell.model.id, index: index + 1, output: outputs.get(index).toJSON() };
}

/** Three buttons for one output; their labels name the output's number (the cell is the one around it). */
export function actionBar(number: number, onAction: (action: OutputAction) => void): HTMLElement {
  const bar = document.createElement('div');
  bar.className = BAR;
  bar.setAttribute('role', 'group');
  bar.setAttribute('aria-label', `nbagent: output ${number}`);
  for (const action of ['explain', 'ask', 'fix'] as OutputAction[]) {
    const button = document.createElement('button');
    button.type = 'button';
    button.className = `jp-nbagent-output-action jp-mod-${action}`;
    button.textContent = LABELS[action];
    button.setAttribute('aria-label', `${LABELS[action]} output ${number} with nbagent`);
    button.title = {
      explain: 'Ask nbagent to explain this output (sends at once)',
      ask: 'Attach this output and its cell to your next prompt',
      fix: 'Ask nbagent to fix the cell (the edit waits for your approval)'
    }[action];
    button.addEventListener('click', event => {
      event.stopPropagation(); // a click on an output would select the cell and scroll
      onAction(action);
    });
    bar.appendChild(button);
  }
  return bar;
}

/** Add the buttons to every output of ``notebook``, now and as outputs come and go. */
export function decorateNotebook(notebook: NotebookWidgetLike, onAction: Handler): MutationObserver {
  const decorate = () => {
    for (const child of Array.from(notebook.content.node.querySelectorAll<HTMLElement>('.jp-OutputArea-child'))) {
      if (child.querySelector(`:scope > .${BAR}`) || child.classList.contains('jp-OutputArea-stdin-item')) {
        continue;
      }
      const siblings = Array.from(child.parentElement?.children ?? []).filter(n => n.classList.contains('jp-OutputArea-child'));
      child.classList.add('jp-nbagent-has-output-actions');
      child.appendChild(
        actionBar(siblings.indexOf(child) + 1, action => {
          const attachment = attachmentFor(notebook, child);
          if (attachment) {
            onAction(action, attachment);
          }
        })
      );
    }
  };
  let queued = false;
  const observer = new MutationObserver(() => {
    if (!queued) {
      queued = true; // one pass per frame, however many outputs changed
      requestAnimationFrame(() => {
        queued = false;
        if (!notebook.isDisposed) {
          decorate();
        }
      });
    }
  });
  observer.observe(notebook.content.node, { childList: true, subtree: true });
  decorate();
  return observer;
}

/** Watch the shell: every notebook that opens gets its outputs decorated until it closes. */
export function startOutputActions(
  shell: { currentChanged?: { connect(fn: () => void): void }; widgets(area?: string): Iterable<unknown> },
  onAction: Handler
): void {
  const watched = new WeakMap<object, MutationObserver>();
  const scan = () => {
    for (const widget of shell.widgets('main')) {
      if (isNotebook(widget) && !watched.has(widget as object)) {
        const notebook = widget as unknown as NotebookWidgetLike;
        const observer = decorateNotebook(notebook, onAction);
        watched.set(widget as object, observer);
        (widget as unknown as { disposed?: { connect(fn: () => void): void } }).disposed?.connect(() => observer.disconnect());
      }
    }
  };
  shell.currentChanged?.connect(scan);
  scan();
}

/** A few words for the chip: "output 2 · image/png", "output 1 · error ValueError". */
export function attachmentLabel(a: OutputAttachment): string {
  const o = a.output;
  let kind: string;
  if (o.output_type === 'error') {
    kind = `error ${String(o.ename ?? '')}`.trim();
  } else if (o.output_type === 'stream') {
    kind = String(o.name ?? 'stream');
  } else {
    const data = (o.data ?? {}) as Record<string, unknown>;
    kind = Object.keys(data).find(k => k.startsWith('image/')) ?? Object.keys(data)[0] ?? String(o.output_type);
  }
  return `output ${a.index} · ${kind}`;
}

/** A PNG or JPEG of the output as a data URL for a thumbnail (base64 checked), else null. */
export function attachmentImage(a: OutputAttachment): string | null {
  const data = (a.output.data ?? {}) as Record<string, unknown>;
  for (const mime of ['image/png', 'image/jpeg']) {
    const raw = data[mime];
    const text = Array.isArray(raw) ? raw.join('') : raw;
    if (typeof text === 'string') {
      const clean = text.replace(/\s+/g, '');
      return /^[A-Za-z0-9+/]+=*$/.test(clean) ? `data:${mime};base64,${clean}` : null;
    }
  }
  return null;
}

/** The output's text, for the chip's tooltip (a stream's text, an error's name and value, text/plain). */
export function attachmentText(a: OutputAttachment, limit = 300): string {
  const o = a.output;
  const join = (v: unknown) => (Array.isArray(v) ? v.join('') : typeof v === 'string' ? v : '');
  let text: string;
  if (o.output_type === 'error') {
    text = `${join(o.ename)}: ${join(o.evalue)}`;
  } else if (o.output_type === 'stream') {
    text = join(o.text);
  } else {
    text = join(((o.data ?? {}) as Record<string, unknown>)['text/plain']);
  }
  return text.length > limit ? `${text.slice(0, limit)}…` : text;
}
