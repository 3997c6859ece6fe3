import { describe, expect, it } from 'vitest';

import { actionPrompt, attachmentImage, attachmentLabel, attachmentText, OutputAttachment } from '../src/outputActions';
import { contextLabel, splitPrompt } from '../src/promptContext';

const attached = (output: Record<string, unknown>): OutputAttachment => ({ notebook: 'a/b.ipynb', cellId: 'c1', index: 2, output });

describe('output actions', () => {
  it('labels an output by its number and kind', () => {
    expect(attachmentLabel(attached({ output_type: 'display_data', data: { 'text/plain': 'x', 'image/png': 'iVBO' } }))).toBe(
      'output 2 · image/png'
    );
    expect(attachmentLabel(attached({ output_type: 'error', ename: 'ZeroDivisionError', evalue: 'x' }))).toBe(
      'output 2 · error ZeroDivisionError'
    );
    expect(attachmentLabel(attached({ output_type: 'stream', name: 'stderr', text: 'w' }))).toBe('output 2 · stderr');
  });

  it('makes a thumbnail only of PNG or JPEG base64, never of other text', () => {
    expect(attachmentImage(attached({ output_type: 'display_data', data: { 'image/png': ['iVBO\n', 'Rw=='] } }))).toBe(
      'data:image/png;base64,iVBORw=='
    );
    expect(attachmentImage(attached({ output_type: 'display_data', data: { 'image/png': '"><script>x</script>' } }))).toBeNull();
    expect(attachmentImage(attached({ output_type: 'display_data', data: { 'image/svg+xml': '<svg/>' } }))).toBeNull();
  });

  it("reads an output's text for the tooltip, cut to a limit", () => {
    expect(attachmentText(attached({ output_type: 'error', ename: 'KeyError', evalue: "'x'" }))).toBe("KeyError: 'x'");
    expect(attachmentText(attached({ output_type: 'stream', name: 'stdout', text: ['a', 'b'] }))).toBe('ab');
    expect(attachmentText(attached({ output_type: 'execute_result', data: { 'text/plain': 'y'.repeat(400) } }), 10)).toBe(
      'yyyyyyyyyy…'
    );
  });

  it('has a standard prompt for Explain and Fix, worded for an error or an output', () => {
    expect(actionPrompt('fix', { output_type: 'error' })).toMatch(/^Fix this error/);
    expect(actionPrompt('explain', { output_type: 'display_data' })).toMatch(/^Explain this output/);
  });

  it("shows the attached output in the user's bubble chip", () => {
    const prompt =
      'Explain this output.\n\n<open_in_jupyter>\nactive notebook: a.ipynb\nactive cell: c1 ("this cell" means it)\n' +
      'attached: output 2 of that cell ("this output" means it; it follows as attachment 1)\n</open_in_jupyter>';
    const split = splitPrompt(prompt);
    expect(split.typed).toBe('Explain this output.');
    expect(split.context?.output).toBe(2);
    expect(contextLabel(split.context!)).toBe('a.ipynb · cell c1 · output 2 attached');
  });
});
