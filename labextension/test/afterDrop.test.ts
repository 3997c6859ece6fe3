import { describe, expect, it } from 'vitest';

import { afterDrop } from '../src/api';

describe('a dropped session socket', () => {
  const info = (id: string) => ({ id }) as never;

  it('reconnects while the session exists, and stops once it was deleted', async () => {
    expect(await afterDrop('a', async () => [info('a'), info('b')])).toBe('retry');
    expect(await afterDrop('gone', async () => [info('a')])).toBe('gone');
  });

  it('retries when the server cannot answer (restarting)', async () => {
    expect(await afterDrop('a', async () => Promise.reject(new Error('502')))).toBe('retry');
  });
});
