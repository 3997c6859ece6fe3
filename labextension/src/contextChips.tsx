/**
 * The session's attached context sources as chips with their status. Clicking a chip mutes or
 * unmutes it; its × removes it. The list is reloaded when the session or the transcript changes.
 */

import * as React from 'react';

import { chipTitle, contextApi, ContextSource } from './context';

export function ContextChips({ sessionId, version }: { sessionId: string | null; version: number }): React.ReactElement | null {
  const [sources, setSources] = React.useState<ContextSource[]>([]);
  const [reload, setReload] = React.useState(0);

  React.useEffect(() => {
    if (!sessionId) {
      setSources([]);
      return;
    }
    let live = true;
    contextApi
      .list(sessionId)
      .then(found => live && setSources(found))
      .catch(() => live && setSources([]));
    return () => {
      live = false;
    };
  }, [sessionId, version, reload]);

  if (!sessionId || sources.length === 0) {
    return null;
  }
  const act = (name: string, action: 'mute' | 'unmute' | 'remove') =>
    contextApi.act(sessionId, name, action).finally(() => setReload(n => n + 1));
  return (
    <div className="jp-nbagent-source-chips" aria-label="attached context">
      {sources.map(s => (
        <span key={`${s.scope}:${s.name}`} className={`jp-nbagent-source-chip jp-mod-${s.status}`} title={chipTitle(s)}>
          <button
            className="jp-nbagent-source-chip-name"
            onClick={() => act(s.name, s.status === 'muted' ? 'unmute' : 'mute')}
            title={s.status === 'muted' ? 'unmute' : 'mute'}
          >
            {s.name}
            <span className="jp-nbagent-source-chip-status"> · {s.status}</span>
          </button>
          <button className="jp-nbagent-source-chip-remove" onClick={() => act(s.name, 'remove')} title="remove">
            ×
          </button>
        </span>
      ))}
    </div>
  );
}
