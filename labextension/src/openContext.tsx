/**
 * What is open, sent with each prompt: the active notebook, its active cell (id) and the selected
 * text. The input shows it as a chip; removing the chip stops sending it until the active cell or
 * notebook changes.
 */

import type { JupyterFrontEnd } from '@jupyterlab/application';
import { ISignal, Signal } from '@lumino/signaling';
import * as React from 'react';

import { isNotebook } from './liveNotebooks';

export interface OpenContext {
  notebook: string | null;
  cell_id: string | null;
  selection: string | null;
}

interface Editor {
  getSelection(): { start: { line: number; column: number }; end: { line: number; column: number } };
  getOffsetAt(position: { line: number; column: number }): number;
  model: { sharedModel: { getSource(): string }; selections: { changed: ISignal<unknown, unknown> } };
}

interface NotebookContent {
  activeCell: { model: { id: string }; editor: Editor | null } | null;
  activeCellChanged: ISignal<unknown, unknown>;
}

const MAX_SELECTION = 4000;

export class OpenContextTracker {
  private value: OpenContext | null = null;
  private dismissedFor: string | null = null;
  private changedSignal = new Signal<this, void>(this);
  private watched = new WeakSet<object>();

  constructor(private readonly app: JupyterFrontEnd) {
    app.shell.currentChanged?.connect(() => this.update());
    this.update();
  }

  get changed(): ISignal<this, void> {
    return this.changedSignal;
  }

  /** What goes with the next prompt: null when nothing is open or the chip was removed. */
  get current(): OpenContext | null {
    return this.value && this.key(this.value) !== this.dismissedFor ? this.value : null;
  }

  /** The active notebook's path, even when its chip was removed (the Check button uses it). */
  get notebook(): string | null {
    return this.value?.notebook ?? null;
  }

  dismiss(): void {
    this.dismissedFor = this.value ? this.key(this.value) : null;
    this.changedSignal.emit();
  }

  private key(c: OpenContext): string {
    return `${c.notebook}\n${c.cell_id}`;
  }

  private update(): void {
    const widget = this.app.shell.currentWidget;
    if (!isNotebook(widget)) {
      this.value = null;
      this.changedSignal.emit();
      return;
    }
    const content = (widget as unknown as { content: NotebookContent }).content;
    if (!this.watched.has(content)) {
      this.watched.add(content);
      content.activeCellChanged.connect(() => this.update());
    }
    const cell = content.activeCell;
    const editor = cell?.editor ?? null;
    if (editor && !this.watched.has(editor)) {
      this.watched.add(editor);
      editor.model.selections.changed.connect(() => this.update());
    }
    this.value = { notebook: widget.context.path, cell_id: cell?.model.id ?? null, selection: selected(editor) };
    this.changedSignal.emit();
  }
}

function selected(editor: Editor | null): string | null {
  if (!editor) {
    return null;
  }
  const range = editor.getSelection();
  const start = editor.getOffsetAt(range.start);
  const end = editor.getOffsetAt(range.end);
  const text = editor.model.sharedModel.getSource().slice(Math.min(start, end), Math.max(start, end));
  return text ? text.slice(0, MAX_SELECTION) : null;
}

export function chipLabel(c: OpenContext): string {
  const name = (c.notebook ?? '').split('/').pop();
  const parts = [name, c.cell_id ? 'active cell' : null, c.selection ? `${c.selection.length} chars selected` : null];
  return parts.filter(Boolean).join(' · ');
}

/** Draw the component again whenever the tracker's open notebook or cell changes. */
export function useRedrawOnChange(tracker: OpenContextTracker | null): void {
  const [, redraw] = React.useState(0);
  React.useEffect(() => {
    if (!tracker) {
      return;
    }
    const again = () => redraw(n => n + 1);
    tracker.changed.connect(again);
    return () => void tracker.changed.disconnect(again);
  }, [tracker]);
}

/** The chip above the prompt box: what will be sent, with a button that removes it. */
export function ContextChip({ tracker }: { tracker: OpenContextTracker | null }): JSX.Element | null {
  useRedrawOnChange(tracker);
  const current = tracker?.current;
  if (!current) {
    return null;
  }
  return (
    <div className="jp-nbagent-context-chip" title="Sent with your prompt: the active notebook, cell and selection">
      <span>{chipLabel(current)}</span>
      <button aria-label="Do not send this context" onClick={() => tracker?.dismiss()}>
        ×
      </button>
    </div>
  );
}
