import { describe, expect, it } from 'vitest';

import type { AgentEvent } from '../src/events';
import { contextNoteLine } from '../src/contextNote';
import { initialState, reduce, rows } from '../src/state';

describe('context notes', () => {
  it('show one line per delivered note, as the Python views do', () => {
    expect(contextNoteLine({ source: 'build', change: 'updated', changes: 3, summary: '41  passed\n' })).toBe(
      'context: build changed 3×: 41 passed'
    );
    expect(contextNoteLine({ source: 'log', change: 'failing', summary: '' })).toBe('context: log is failing');
    expect(contextNoteLine({ source: 'kernel', change: 'attached', summary: 'x'.repeat(150) })).toHaveLength(
      'context: kernel attached: '.length + 100
    );
  });

  it('land in the transcript of the turn they were delivered in', () => {
    const events = [
      { type: 'turn_start', prompt: 'fix it', session_id: 's1' },
      {
        type: 'context_note', source: 'kernel', note_id: 'ctx-kernel-1-abc', change: 'attached',
        summary: 'error in In [3]: ZeroDivisionError', changes: 0, text: '[context note …]', session_id: 's1'
      }
    ];
    const state = events.reduce((s, e) => reduce(s, { turn_id: 't1', title: null, ...e } as AgentEvent), initialState('s1'));
    const all = rows(state);
    const notes = all.filter(i => i.kind === 'note');
    expect(all.map(r => r.kind)).toEqual(['user', 'note']);
    expect(notes.map(n => (n as { text: string }).text)).toEqual([
      'context: kernel attached: error in In [3]: ZeroDivisionError'
    ]);
  });
});
