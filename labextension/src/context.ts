/**
 * Attached context in the panel: the session's sources (for the chips) and the one line a delivered
 * context note shows. The server routes are in nbagent/jupyter/server/context_routes.py.
 */

import { request } from './api';

export interface ContextSource {
  name: string;
  kind: 'command' | 'push' | 'file' | 'variable' | 'kernel' | 'cell' | string;
  scope: 'session' | 'workspace';
  status: 'ok' | 'waiting' | 'failing' | 'muted' | string;
  serial: number;
  summary: string;
  error: string | null;
  fetched_at: number | null;
  why: string;
  wake: boolean;
}

export type SourceAction = 'mute' | 'unmute' | 'remove';

export const contextApi = {
  list: (sessionId: string) =>
    request<{ sources: ContextSource[] }>(`sessions/${sessionId}/context`).then(r => r.sources),
  act: (sessionId: string, name: string, action: SourceAction) =>
    request<unknown>(`sessions/${sessionId}/context/${encodeURIComponent(name)}/${action}`, {
      method: 'POST',
      body: '{}'
    })
};

/** A chip's tooltip: what the source is and its last state (plain text: React escapes it). */
export function chipTitle(source: ContextSource): string {
  const lines = [`${source.name} (${source.kind}, ${source.scope}) — ${source.status}, revision ${source.serial}`];
  if (source.why) {
    lines.push(`why: ${source.why}`);
  }
  if (source.summary) {
    lines.push(source.summary);
  }
  if (source.error) {
    lines.push(`error: ${source.error}`);
  }
  return lines.join('\n');
}
