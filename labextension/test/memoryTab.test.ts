import { describe, expect, it } from 'vitest';

import { hitMeta, rowMeta, shortText } from '../src/memoryTab';

describe('memory tab text', () => {
  it('describes a row with its tags, source and counts', () => {
    expect(rowMeta({ category: 'decision', tags: 'deploy ci', hits: 3, injected: 5, source: 'global' })).toBe(
      'decision · deploy, ci · global · used 3× · injected 5×'
    );
    expect(rowMeta({ category: 'fact', tags: '', hits: 0, injected: 0, source: 'workspace' })).toBe(
      'fact · used 0× · injected 0×'
    );
  });

  it('shows a hit with its score and why', () => {
    expect(hitMeta({ category: 'fact', score: 0.6234, why: 'cosine 0.52 (raw 0.87) + keywords 0.40' })).toBe(
      'fact · 0.62: cosine 0.52 (raw 0.87) + keywords 0.40'
    );
  });

  it('flattens and cuts long text', () => {
    expect(shortText('a\n\n  b')).toBe('a b');
    expect(shortText('x'.repeat(400), 10)).toBe('xxxxxxxxx…');
  });
});
