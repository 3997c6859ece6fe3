/**
 * Reviewing a turn where it happened: for each notebook or text file open in JupyterLab with rows still
 * to review (GET /nbagent/api/changes?path=...), a bar on top of the tab (Keep all / Undo all / Redo)
 * and, in a notebook, each changed cell's block in the cell itself; a text file's hunks show in a diff
 * view beside it. Every button asks the server (keep / undo / redo), which writes the file and the open
 * view and records a checkpoint event; nothing here edits a cell.
 *
 * Rows are fetched again on the server's "changes" and "checkpoint" events and at a turn's end (the
 * panel's socket and the views socket), and shortly after the document changes (a turn of %agent in a
 * kernel edits the open notebook through the server).
 */

import type { JupyterFrontEnd } from '@jupyterlab/application';
import { MainAreaWidget } from '@jupyterlab/apputils';
import { BoxPanel, Widget } from '@lumino/widgets';

import { request } from './api';
import {
  ActionBody,
  actionBodies,
  ChangeRow,
  ChangeTurn,
  groupRows,
  nextIndex,
  ordered,
  pathBodies,
  ReviewAction,
  ReviewGroup,
  summary,
  verbs
} from './reviewRows';
import { button, groupBlock, keepKeys } from './reviewView';

export const ReviewCommandIDs = {
  next: 'nbagent:review-next-change',
  previous: 'nbagent:review-previous-change',
  keep: 'nbagent:review-keep',
  undo: 'nbagent:review-undo',
  redo: 'nbagent:review-redo',
  keepAll: 'nbagent:review-keep-all',
  undoAll: 'nbagent:review-undo-all'
} as const;

interface ActResult {
  undone?: string[];
  redone?: string[];
  kept?: string[];
  refused?: { id: string; reason: string }[];
}

const post = (action: ReviewAction, body: ActionBody) =>
  request<ActResult>(`changes/${action}`, { method: 'POST', body: JSON.stringify(body) });

/** The parts of a document tab this module uses (no @jupyterlab/notebook or fileeditor import). */
interface DocWidget extends Widget {
  context: {
    path: string;
    ready: Promise<void>;
    model: { contentChanged?: { connect(fn: () => void): void }; dirty?: boolean };
    revert?(): Promise<void>;
  };
  contentHeader: BoxPanel;
  content: { widgets?: CellLike[] };
}

interface CellLike {
  model: { id: string };
  node: HTMLElement;
}

function isDoc(widget: unknown): widget is DocWidget {
  const w = widget as Partial<DocWidget>;
  return typeof w?.context?.path === 'string' && w.contentHeader instanceof BoxPanel;
}

const isNotebook = (w: DocWidget) => Array.isArray(w.content?.widgets);

/** The review of one open tab. */
class DocReview {
  groups: ReviewGroup[] = [];
  readonly bar = new Widget();
  private text = document.createElement('span');
  private status = document.createElement('span');
  private buttons: Record<string, HTMLButtonElement> = {};
  private seen = '';
  /** Each undo's bodies, naming the rows it took back: Redo re-applies the last one, then the one before. */
  private redoable: ActionBody[][] = [];
  private diff: MainAreaWidget | null = null;
  private timers: number[] = [];

  constructor(
    readonly tracker: ReviewTracker,
    readonly widget: DocWidget
  ) {
    this.bar.addClass('jp-nbagent-review-bar');
    this.bar.node.setAttribute('role', 'toolbar');
    this.bar.node.setAttribute('aria-label', 'nbagent review');
    this.text.className = 'jp-nbagent-review-summary';
    this.status.className = 'jp-nbagent-review-status';
    this.status.setAttribute('role', 'status');
    this.bar.node.append(this.text);
    const add = (key: string, text: string, label: string, run: () => void) => {
      this.buttons[key] = button(text, label, `jp-mod-${key}`, run);
      this.bar.node.append(this.buttons[key]);
    };
    add('diff', 'Show diff', 'Show the changes to this file beside it', () => this.openDiff());
    add('previous', 'Previous', 'Previous change (Alt P)', () => this.move(-1));
    add('next', 'Next', 'Next change (Alt N)', () => this.move(1));
    add('keepAll', 'Keep all', 'Keep all the changes to this file', () => void this.actAll('keep'));
    add('undoAll', 'Undo all', 'Undo all the changes to this file', () => void this.actAll('undo'));
    add('redo', 'Redo', 'Redo what was undone last (Alt R)', () => void this.redo());
    this.bar.node.append(this.status);
    keepKeys(this.bar.node);
    this.bar.hide();
    widget.contentHeader.addWidget(this.bar);
    widget.context.model.contentChanged?.connect(() => this.soon());
  }

  get path(): string {
    return this.widget.context.path;
  }

  /**
   * Fetch again a little after the document changed (a burst of edits gives one request), and twice more
   * later: a turn of %agent in a kernel edits the notebook through the server, but its rows exist only
   * once that turn has ended, and no event of it reaches this page.
   */
  soon(): void {
    this.timers.forEach(t => window.clearTimeout(t));
    this.timers = [600, 3000, 10000].map(ms => window.setTimeout(() => void this.refresh(), ms));
  }

  async refresh(): Promise<void> {
    let turns: ChangeTurn[];
    try {
      turns = (await request<{ turns: ChangeTurn[] }>(`changes?path=${encodeURIComponent(this.path)}`)).turns;
    } catch {
      return; // an older server without the route, or a path outside the workspace: nothing to review
    }
    const groups = groupRows(turns);
    const seen = JSON.stringify(groups);
    if (seen !== this.seen) {
      this.seen = seen;
      this.groups = groups;
      this.render();
    }
  }

  rows(): ChangeRow[] {
    return this.groups.flatMap(g => g.rows);
  }

  /** The index of the focused hunk, else of the first hunk of the block that holds the focus (a block's
   *  button), or -1. The hunk itself: a render between focusing a block's second hunk and Alt U (the
   *  rows fetched again after the document changed) must leave the focus on that hunk, not the first. */
  private focusAt(): number {
    const active = document.activeElement;
    const hunks = this.hunks();
    const exact = hunks.findIndex(h => h.contains(active));
    return exact >= 0 ? exact : hunks.findIndex(h => h.closest('.jp-nbagent-review-block')?.contains(active));
  }

  /** The focusable hunks, in the order of the document. */
  hunks(): HTMLElement[] {
    const roots = [this.widget.node, this.diff?.node].filter(Boolean) as HTMLElement[];
    return roots.flatMap(r => [...r.querySelectorAll<HTMLElement>('.jp-nbagent-review-hunk')]);
  }

  render(): void {
    const focused = this.focusAt();
    // The focused hunk's row: a render with other rows (a fetch that was under way when an action's own
    // fetch ended) shifts the indexes, and Alt U must still act on the hunk the user chose.
    const row = (document.activeElement as HTMLElement | null)?.closest<HTMLElement>('.jp-nbagent-review-hunk')
      ?.dataset.rowId;
    for (const old of this.widget.node.querySelectorAll('.jp-nbagent-review-block')) {
      old.remove();
    }
    const onAct = (action: 'keep' | 'undo', rows: ChangeRow[]) => void this.act(action, rows);
    if (isNotebook(this.widget)) {
      this.renderCells(onAct);
    }
    this.renderDiff(onAct);
    const open = this.groups.length > 0;
    const v = verbs(this.rows());
    this.text.textContent = open ? summary(this.groups) : 'nbagent: nothing left to review';
    this.buttons.keepAll.textContent = `${v.keep} all`;
    this.buttons.undoAll.textContent = `${v.undo} all`;
    for (const key of ['previous', 'next', 'keepAll', 'undoAll']) {
      this.buttons[key].disabled = !open;
    }
    this.buttons.redo.disabled = this.redoable.length === 0;
    this.buttons.diff.hidden = isNotebook(this.widget) || !open;
    if (this.bar.isHidden && open) {
      this.status.textContent = ''; // a new review: what the last one did is old news
    }
    this.bar.setHidden(!open && this.redoable.length === 0);
    const same = row ? this.hunks().find(h => h.dataset.rowId === row) : undefined;
    if (same) {
      same.focus();
    } else if (focused >= 0) {
      this.refocus(focused);
    }
  }

  private renderCells(onAct: (action: 'keep' | 'undo', rows: ChangeRow[]) => void): void {
    const cells = this.widget.content.widgets ?? [];
    for (const group of this.groups) {
      const index = cells.findIndex(c => c.model.id === group.cellId);
      const block = groupBlock(group, index >= 0 ? index + 1 : null, onAct);
      if (index >= 0) {
        const cell = cells[index].node;
        const input = cell.querySelector(':scope > .jp-Cell-inputWrapper');
        input ? input.after(block) : cell.append(block);
      } else if (cells.length) {
        // A deleted cell's block goes where it was (its place in the notebook before the turn).
        const at = group.rows[0].kind === 'deleted' ? group.rows[0].start_before - 1 : 0;
        at < cells.length ? cells[Math.max(at, 0)].node.prepend(block) : cells[cells.length - 1].node.append(block);
      }
    }
  }

  private renderDiff(onAct: (action: 'keep' | 'undo', rows: ChangeRow[]) => void): void {
    if (!this.diff || this.diff.isDisposed) {
      this.diff = null;
      return;
    }
    const body = this.diff.content.node;
    body.replaceChildren();
    if (!this.groups.length) {
      body.append(Object.assign(document.createElement('p'), { textContent: 'Nothing left to review.' }));
    }
    for (const group of this.groups) {
      body.append(groupBlock(group, null, onAct));
    }
  }

  openDiff(): void {
    if (!this.diff || this.diff.isDisposed) {
      const content = new Widget();
      content.addClass('jp-nbagent-review-diffview');
      content.node.setAttribute('role', 'region');
      content.node.setAttribute('aria-label', `nbagent changes to ${this.path}`);
      this.diff = new MainAreaWidget({ content });
      this.diff.id = `nbagent-review-${this.widget.id}`;
      this.diff.title.label = `Review: ${this.path.split('/').pop()}`;
      this.diff.title.closable = true;
      this.diff.toolbar.hide(); // nothing to put there: the blocks carry the buttons
      this.tracker.app.shell.add(this.diff, 'main', { mode: 'split-right', ref: this.widget.id });
      this.render();
    }
    this.tracker.app.shell.activateById(this.diff.id);
    this.hunks()[0]?.focus();
  }

  /** Focus the next or previous hunk (Alt N / Alt P), scrolled into view. */
  move(step: 1 | -1): void {
    const hunks = this.hunks();
    const at = hunks.findIndex(h => h.contains(document.activeElement));
    const next = nextIndex(at, hunks.length, step);
    if (next >= 0) {
      hunks[next].scrollIntoView({ block: 'nearest' });
      hunks[next].focus();
    }
  }

  private refocus(index: number): void {
    const hunks = this.hunks();
    if (hunks.length) {
      hunks[Math.min(index, hunks.length - 1)].focus();
    } else if (!this.buttons.redo.disabled) {
      this.buttons.redo.focus();
    }
  }

  /** The rows the keyboard's Keep / Undo act on: the focused hunk's, or the focused block's. */
  focusedRows(): ChangeRow[] {
    const active = document.activeElement as HTMLElement | null;
    const byId = new Map(this.rows().map(r => [r.id, r]));
    const hunk = active?.closest<HTMLElement>('.jp-nbagent-review-hunk');
    if (hunk?.dataset.rowId && byId.has(hunk.dataset.rowId)) {
      return [byId.get(hunk.dataset.rowId)!];
    }
    const key = active?.closest<HTMLElement>('.jp-nbagent-review-block')?.dataset.groupKey;
    return this.groups.find(g => g.key === key)?.rows ?? [];
  }

  async act(action: 'keep' | 'undo', rows: ChangeRow[]): Promise<void> {
    await this.send(action, actionBodies(rows));
  }

  async actAll(action: 'keep' | 'undo'): Promise<void> {
    if (action === 'keep') {
      this.redoable = []; // "Keep all" closes the review
    }
    await this.send(action, ordered(pathBodies(this.groups, this.path), action));
  }

  async redo(): Promise<void> {
    const last = this.redoable.pop();
    if (last) {
      await this.send('redo', [...last].reverse());
    }
  }

  private async send(action: ReviewAction, bodies: ActionBody[]): Promise<void> {
    if (!bodies.length) {
      return;
    }
    const focused = this.focusAt();
    // A rejected suggestion was never written: there is nothing to redo.
    const suggested = new Set(this.rows().filter(r => r.status === 'suggested').map(r => r.id));
    const refused: string[] = [];
    let done = 0;
    const undone: ActionBody[] = [];
    for (const body of bodies) {
      try {
        const result = await post(action, body);
        const ids = result.undone ?? result.redone ?? result.kept ?? [];
        done += ids.length;
        refused.push(...(result.refused ?? []).map(r => r.reason));
        const written = ids.filter(id => !suggested.has(id));
        if (action === 'undo' && written.length) {
          undone.push({ ...body, only: written });
        }
      } catch (err) {
        refused.push((err as Error).message);
      }
    }
    if (undone.length) {
      this.redoable.push(undone);
    }
    const verb = { keep: 'Kept', undo: 'Undid', redo: 'Redid' }[action];
    this.status.textContent =
      `${verb} ${done} change${done === 1 ? '' : 's'}` + (refused.length ? `; refused: ${refused.join('; ')}` : '');
    if (done && !isNotebook(this.widget)) {
      await this.reloadText();
    }
    this.seen = '';
    await this.tracker.refreshAll();
    if (focused >= 0 || this.bar.node.contains(document.activeElement)) {
      this.refocus(Math.max(focused, 0));
    }
  }

  /**
   * Nothing tells an open text editor that the server wrote its file (without collaboration, and with it
   * the room did not reload within 15 s in the browser test): load it again, as "Reload from Disk" does,
   * unless the user has unsaved edits there (they stay; JupyterLab asks on their next save). A notebook's
   * tab is edited by the server directly.
   */
  private async reloadText(): Promise<void> {
    const { context } = this.widget;
    if (context.model.dirty || !context.revert) {
      return;
    }
    try {
      await context.revert();
    } catch {
      // the file went away meanwhile: the editor keeps what it shows
    }
  }

  dispose(): void {
    this.timers.forEach(t => window.clearTimeout(t));
    this.bar.dispose();
    this.diff?.dispose();
  }
}

/** All open tabs' reviews, and the review commands (which act on the current tab's review). */
export class ReviewTracker {
  private reviews = new Map<DocWidget, DocReview>();

  constructor(readonly app: JupyterFrontEnd) {
    const shell = app.shell as unknown as { layoutModified?: { connect(fn: () => void): void } };
    shell.layoutModified?.connect(() => this.scan());
    this.addCommands();
    this.scan();
  }

  private scan(): void {
    for (const widget of this.app.shell.widgets('main')) {
      if (isDoc(widget) && !this.reviews.has(widget)) {
        const review = new DocReview(this, widget);
        this.reviews.set(widget, review);
        widget.disposed.connect(() => {
          review.dispose();
          this.reviews.delete(widget);
        });
        void widget.context.ready.then(() => review.refresh());
      }
    }
  }

  /** After a "changes" or "checkpoint" event or a turn's end: every open tab fetches its rows again. */
  async refreshAll(): Promise<void> {
    await Promise.all([...this.reviews.values()].map(r => r.refresh()));
  }

  /** The review of the current tab, or of the file whose diff view is current. */
  current(): DocReview | null {
    const widget = this.app.shell.currentWidget;
    for (const [doc, review] of this.reviews) {
      if (doc === widget || widget?.id === `nbagent-review-${doc.id}`) {
        return review;
      }
    }
    return null;
  }

  private addCommands(): void {
    const { commands } = this.app;
    const has = () => (this.current()?.groups.length ?? 0) > 0;
    const add = (id: string, label: string, keys: string[] | null, execute: (r: DocReview) => unknown, enabled = has) => {
      commands.addCommand(id, {
        label,
        isEnabled: enabled,
        execute: () => {
          const review = this.current();
          return review ? execute(review) : undefined;
        }
      });
      if (keys) {
        commands.addKeyBinding({ command: id, keys, selector: 'body' });
      }
    };
    add(ReviewCommandIDs.next, 'nbagent: Next Change to Review', ['Alt N'], r => r.move(1));
    add(ReviewCommandIDs.previous, 'nbagent: Previous Change to Review', ['Alt P'], r => r.move(-1));
    add(ReviewCommandIDs.keep, 'nbagent: Keep the Focused Change', ['Alt K'], r => r.act('keep', r.focusedRows()));
    add(ReviewCommandIDs.undo, 'nbagent: Undo the Focused Change', ['Alt U'], r => r.act('undo', r.focusedRows()));
    add(ReviewCommandIDs.redo, 'nbagent: Redo the Last Undo of the Review', ['Alt R'], r => r.redo(), () => true);
    add(ReviewCommandIDs.keepAll, 'nbagent: Keep All Changes to This File', null, r => r.actAll('keep'));
    add(ReviewCommandIDs.undoAll, 'nbagent: Undo All Changes to This File', null, r => r.actAll('undo'));
  }
}
