/**
 * The DOM of the review: a change block (a cell's or a file's rows, with Keep / Undo for the whole and for
 * each hunk) and the bar on top of a notebook or file tab. Every text shown comes from the server's rows,
 * which hold what the model wrote: it goes in with textContent only, never as markup.
 */

import { ChangeRow, groupLabel, ReviewGroup, rowLabel, rowLines, verbs } from './reviewRows';

export type OnAct = (action: 'keep' | 'undo', rows: ChangeRow[]) => void;

function el<K extends keyof HTMLElementTagNameMap>(tag: K, cls: string, text?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  node.className = cls;
  if (text !== undefined) {
    node.textContent = text;
  }
  return node;
}

export function button(text: string, label: string, cls: string, onClick: () => void): HTMLButtonElement {
  const b = el('button', `jp-nbagent-review-button ${cls}`, text);
  b.type = 'button';
  b.setAttribute('aria-label', label);
  b.title = label;
  b.addEventListener('click', event => {
    event.stopPropagation();
    onClick();
  });
  return b;
}

/**
 * Keys typed on the review's own controls stay there: a notebook in command mode would take Enter, Space,
 * arrows and letters for itself. Chords with Alt / Ctrl / Meta go on, to reach the review's shortcuts.
 */
export function keepKeys(node: HTMLElement): void {
  node.addEventListener('keydown', event => {
    if (!event.altKey && !event.ctrlKey && !event.metaKey && event.key !== 'Tab') {
      event.stopPropagation();
    }
  });
}

function diffPre(row: ChangeRow): HTMLElement {
  const pre = el('pre', 'jp-nbagent-review-diff');
  const lines = rowLines(row);
  if (lines.length === 0) {
    pre.appendChild(el('span', 'jp-nbagent-review-line jp-mod-note', rowLabel(row)));
  }
  for (const line of lines) {
    const cls = line.sign === '-' ? 'jp-mod-removed' : line.sign === '+' ? 'jp-mod-added' : 'jp-mod-context';
    pre.appendChild(el('span', `jp-nbagent-review-line ${cls}`, `${line.sign} ${line.text}`));
  }
  return pre;
}

function hunkNode(row: ChangeRow, where: string, many: boolean, onAct: OnAct): HTMLElement {
  const what = rowLabel(row);
  const node = el('div', 'jp-nbagent-review-hunk');
  node.tabIndex = 0;
  node.dataset.rowId = row.id;
  node.setAttribute('role', 'group');
  node.setAttribute('aria-label', `${what} of ${where}${row.status === 'suggested' ? ', suggested' : ''}`);
  if (many) {
    const head = el('div', 'jp-nbagent-review-hunk-head');
    head.appendChild(el('span', 'jp-nbagent-review-what', what));
    const v = verbs([row]);
    head.appendChild(button(v.keep, `${v.keep} ${what} of ${where}`, 'jp-mod-keep', () => onAct('keep', [row])));
    head.appendChild(button(v.undo, `${v.undo} ${what} of ${where}`, 'jp-mod-undo', () => onAct('undo', [row])));
    node.appendChild(head);
  }
  node.appendChild(diffPre(row));
  return node;
}

/** A group's block: a head naming the change with Keep / Undo for all of it, then one part per row. */
export function groupBlock(group: ReviewGroup, cellNumber: number | null, onAct: OnAct): HTMLElement {
  const where = groupLabel(group, cellNumber);
  const block = el('section', 'jp-nbagent-review-block');
  block.dataset.groupKey = group.key;
  block.setAttribute('aria-label', `nbagent change to ${where}`);
  const head = el('div', 'jp-nbagent-review-head');
  const many = group.rows.length > 1;
  const summary = many ? `${group.rows.length} changes` : rowLabel(group.rows[0]);
  head.appendChild(el('span', 'jp-nbagent-review-what', `nbagent, turn ${group.turn}: ${summary}`));
  const v = verbs(group.rows);
  const scope = group.cellId === null ? 'file' : 'cell';
  head.appendChild(
    button(`${v.keep} ${scope}`, `${v.keep} every change to ${where}`, 'jp-mod-keep', () => onAct('keep', group.rows))
  );
  head.appendChild(
    button(`${v.undo} ${scope}`, `${v.undo} every change to ${where}`, 'jp-mod-undo', () => onAct('undo', group.rows))
  );
  block.appendChild(head);
  for (const row of group.rows) {
    block.appendChild(hunkNode(row, where, many, onAct));
  }
  keepKeys(block);
  return block;
}
