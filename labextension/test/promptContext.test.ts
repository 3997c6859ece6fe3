import { describe, expect, it } from 'vitest';

import { contextLabel, splitPrompt } from '../src/promptContext';

describe('splitPrompt: the words typed, and what nbagent added as a chip', () => {
  it('keeps a prompt without a block as it is', () => {
    expect(splitPrompt('hello')).toEqual({ typed: 'hello', context: null });
  });

  it('takes the open-in-Jupyter block out of the bubble', () => {
    const prompt =
      'What does this cell do?\n\n<open_in_jupyter>\nactive notebook: quick.ipynb\n' +
      'active cell: 6b171426 ("this cell" means it; notebook_read shows it)\nselected text:\nx = 1\n</open_in_jupyter>';
    const { typed, context } = splitPrompt(prompt);
    expect(typed).toBe('What does this cell do?');
    expect(context).toEqual({ notebook: 'quick.ipynb', cellId: '6b171426', ownCell: false, selectionChars: 5, output: null });
    expect(contextLabel(context!)).toBe('quick.ipynb · cell 6b171426 · 5 selected characters');
  });

  it("names the %%agent cell a prompt was written in", () => {
    const { context } = splitPrompt('Plot it\n\n<open_in_jupyter>\nactive notebook: a.ipynb\nthis prompt was written in cell abc of that notebook\n</open_in_jupyter>');
    expect(contextLabel(context!)).toBe('a.ipynb · written in cell abc');
  });
});
