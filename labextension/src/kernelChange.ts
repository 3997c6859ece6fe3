/* What a call did to the kernel's namespace, in one line: the same words as the Python front ends
 * (nbagent.render.text.kernel_line): "kernel: + df_clean, ~ df (changed in place), - tmp". */

import type { KernelChange } from './events';

const LIMIT = 12;

export function kernelLine(change: KernelChange): string {
  const parts = [
    ...change.added.map(n => `+ ${n}`),
    ...change.rebound.map(n => `= ${n}`),
    ...change.mutated.map(n => `~ ${n} (changed in place)`),
    ...change.deleted.map(n => `- ${n}`)
  ];
  const more = parts.length > LIMIT ? `, … ${parts.length - LIMIT} more` : '';
  const shown = parts.slice(0, LIMIT).join(', ') + more;
  const checked = change.unchecked.length ? `${change.unchecked.length} not checked` : '';
  let line: string;
  if (!shown) {
    line = checked ? `kernel: no change seen (${checked})` : 'kernel: no change';
  } else {
    line = `kernel: ${shown}` + (checked ? ` (${checked})` : '');
  }
  if (change.dropped.length) {
    line += '; released by the undo memory cap: ' + change.dropped.join(', ');
  }
  return line;
}
