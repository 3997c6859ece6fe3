import { describe, expect, it } from 'vitest';

import { checkTitle } from '../src/check';
import { filesLine, kernelRestoreLine } from '../src/checkpoints';
import { kernelLine } from '../src/kernelChange';

const none = { added: [], rebound: [], deleted: [], mutated: [], unchecked: [], dropped: [] };

describe('kernelLine (the words of nbagent.render.text.kernel_line)', () => {
  it('lists added, rebound, changed-in-place and deleted names, and counts the unchecked ones', () => {
    const line = kernelLine({ ...none, added: ['df_clean'], rebound: ['x'], mutated: ['df'], deleted: ['tmp'], unchecked: ['model'] });
    expect(line).toBe('kernel: + df_clean, = x, ~ df (changed in place), - tmp (1 not checked)');
  });

  it('says when nothing was seen, and what the memory cap released', () => {
    expect(kernelLine({ ...none, unchecked: ['a', 'b'] })).toBe('kernel: no change seen (2 not checked)');
    expect(kernelLine({ ...none, added: ['y'], dropped: ['df (turn 1)'] })).toBe(
      'kernel: + y; released by the undo memory cap: df (turn 1)'
    );
  });

  it('shortens a long list', () => {
    const added = Array.from({ length: 14 }, (_, i) => `v${i}`);
    expect(kernelLine({ ...none, added })).toMatch(/v11, … 2 more$/);
  });
});


describe('checkTitle', () => {
  it('names the notebook and the verdict', () => {
    expect(checkTitle('work/a.ipynb', true)).toBe('a.ipynb runs from a fresh kernel');
    expect(checkTitle('a.ipynb', false)).toBe('a.ipynb does not reproduce from a fresh kernel');
  });
});

describe('filesLine', () => {
  it('says a turn with no file changed the kernel', () => {
    expect(filesLine([])).toBe('kernel variables changed');
    expect(filesLine(['a.py'])).toBe('1 file changed: a.py');
  });
});

describe('kernelRestoreLine', () => {
  it('says which kernel variables an undo restored and which it could not', () => {
    const undone = { turn: 2, files: [], undone: true, names: ['x'], not_restored: ['df (changed in place)'] };
    expect(kernelRestoreLine(undone)).toBe('kernel variables restored: x · not restored: df (changed in place)');
    expect(kernelRestoreLine({ ...undone, undone: false, not_restored: [] })).toBe('kernel variables bound again: x');
    expect(kernelRestoreLine({ turn: 1, files: ['a.py'], undone: false })).toBe('');
  });
});
