/**
 * A prompt as the user typed it, and what nbagent added after it (nbagent.engine.open_in_jupyter's
 * `<open_in_jupyter>` block: the active notebook, cell and selection). The panel shows the typed words
 * in the user's bubble and the addition as a chip, never as prompt text.
 */

export const OPEN_CONTEXT_TAG = '<open_in_jupyter>';

export interface AddedContext {
  notebook: string | null;
  cellId: string | null;
  /** True when the prompt was written in that cell itself (%%agent). */
  ownCell: boolean;
  selectionChars: number;
  /** The number of the cell's output attached to the prompt (Explain / Ask / Fix on it), else null. */
  output: number | null;
}

export interface SplitPrompt {
  typed: string;
  context: AddedContext | null;
}

export function splitPrompt(prompt: string): SplitPrompt {
  const at = prompt.indexOf(`\n\n${OPEN_CONTEXT_TAG}`);
  if (at < 0) {
    return { typed: prompt, context: null };
  }
  const block = prompt.slice(at + 2 + OPEN_CONTEXT_TAG.length).replace(/\n?<\/open_in_jupyter>\s*$/, '');
  const context: AddedContext = { notebook: null, cellId: null, ownCell: false, selectionChars: 0, output: null };
  const lines = block.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    let m: RegExpMatchArray | null;
    if ((m = line.match(/^active notebook: (.*)$/))) {
      context.notebook = m[1];
    } else if ((m = line.match(/^active cell: ([A-Za-z0-9_-]+)/))) {
      context.cellId = m[1];
    } else if ((m = line.match(/^this prompt was written in cell ([A-Za-z0-9_-]+)/))) {
      context.cellId = m[1];
      context.ownCell = true;
    } else if ((m = line.match(/^attached: output (\d+) of that cell/))) {
      context.output = Number(m[1]);
    } else if (line === 'selected text:') {
      context.selectionChars = lines.slice(i + 1).join('\n').length;
      break;
    }
  }
  return { typed: prompt.slice(0, at), context };
}

/** The chip's words for what nbagent added: "with quickstart.ipynb · cell 1a2b3c · 42 selected characters". */
export function contextLabel(context: AddedContext): string {
  const parts: string[] = [];
  if (context.notebook) {
    parts.push(context.notebook);
  }
  if (context.cellId) {
    parts.push(`${context.ownCell ? 'written in cell' : 'cell'} ${context.cellId}`);
  }
  if (context.output !== null) {
    parts.push(`output ${context.output} attached`);
  }
  if (context.selectionChars) {
    parts.push(`${context.selectionChars} selected characters`);
  }
  return parts.join(' · ');
}
