/**
 * The one line a delivered context note shows in the panel (pure: the state reducer uses it).
 */

/** The fields of a context_note event the panel uses (nbagent.events.ContextNote). */
export interface ContextNoteFields {
  source: string;
  change?: string;
  summary?: string;
  changes?: number;
}

/** "context: build changed 3×: 41 passed" — the same line the Python views show (context/notes.py). */
export function contextNoteLine(note: ContextNoteFields): string {
  const what: Record<string, string> = {
    updated: `changed ${note.changes ?? 0}×`,
    failing: 'is failing',
    removed: 'was removed',
    attached: 'attached'
  };
  const change = note.change ?? 'updated';
  const summary = (note.summary ?? '').replace(/\s+/g, ' ').trim();
  const short = summary.length > 100 ? summary.slice(0, 99) + '…' : summary;
  return `context: ${note.source} ${what[change] ?? change}` + (short ? `: ${short}` : '');
}
