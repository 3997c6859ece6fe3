import { describe, expect, it } from 'vitest';

import type { IInlineCompletionContext } from '@jupyterlab/completer';

import { NbagentInlineProvider, requestBody, DEFAULT_SETTINGS } from '../src/completions';

const widget = { context: { path: 'work/a.ipynb' }, content: { activeCell: { model: { id: 'cell-2' } } } };
const context = { widget, triggerKind: 1 } as unknown as IInlineCompletionContext;

describe('inline completion provider', () => {
  it('sends the path, the cell id and the text around the cursor', () => {
    expect(requestBody({ text: 'df.gro\nx = 1', offset: 6 }, context, DEFAULT_SETTINGS)).toEqual({
      path: 'work/a.ipynb',
      cell_id: 'cell-2',
      prefix: 'df.gro',
      suffix: '\nx = 1'
    });
    const chosen = requestBody({ text: 'a', offset: 1 }, context, { enabled: 'on', debounceMs: 0, model: 'coder' });
    expect(chosen).toMatchObject({ model: 'coder', enabled: 'on' });
  });

  it('asks for nothing where there is no file to complete in', () => {
    const console_ = { widget: {}, triggerKind: 1 } as unknown as IInlineCompletionContext;
    expect(requestBody({ text: 'a', offset: 1 }, console_, DEFAULT_SETTINGS)).toBeNull();
  });

  it('waits for quiet: the next keystroke cancels the wait, so one request goes out', async () => {
    const provider = new NbagentInlineProvider();
    provider.configureWith({ debounceMs: 40 });
    const first = provider.fetch({ text: 'sales.r', offset: 7 }, context);
    const second = provider.fetch({ text: 'sales.re', offset: 8 }, context);
    expect(await first).toEqual({ items: [] });
    expect(provider.sent).toBe(0); // the first keystroke's request never left
    await second; // no server here: the request fails, and the editor shows nothing
    expect(provider.sent).toBe(1);
  });

  it('sends nothing when switched off', async () => {
    const provider = new NbagentInlineProvider();
    provider.configureWith({ enabled: 'off', debounceMs: 0 });
    expect(await provider.fetch({ text: 'x', offset: 1 }, context)).toEqual({ items: [] });
    expect(provider.sent).toBe(0);
  });
});
