/**
 * The panel's Memory tab: project memory listed, searched (with each hit's score and why) and
 * forgotten, over REST (GET memory, GET memory/search?q=, POST memory/forget {id}); see
 * docs/knowledge.md. Kept apart from the panel's state: it only needs the REST API.
 * Everything shown is text rendered by React, so entries written by the model cannot inject HTML.
 */
import * as React from 'react';

import { request } from './api';

export interface MemoryRow {
  id: number;
  category: string;
  text: string;
  tags: string;
  hits: number;
  injected: number;
  created: number;
  expires: number | null;
  chunk_of: number | null;
  source: string;
}

export interface MemoryHit {
  id: number;
  text: string;
  category: string;
  tags: string;
  source: string;
  score: number;
  cosine: number | null;
  keyword: number;
  why: string;
}

const post = (body: unknown): RequestInit => ({ method: 'POST', body: JSON.stringify(body) });

export const memoryApi = {
  rows: () => request<{ rows: MemoryRow[] }>('memory').then(r => r.rows),
  search: (q: string, k = 10) =>
    request<{ hits: MemoryHit[] }>(`memory/search?${new URLSearchParams({ q, k: String(k) })}`).then(r => r.hits),
  forget: (id: number) => request<{ removed: MemoryRow[] }>('memory/forget', post({ id })).then(r => r.removed)
};

/** "decision · deploy, ci · used 3× · injected 5×" */
export function rowMeta(row: Pick<MemoryRow, 'category' | 'tags' | 'hits' | 'injected' | 'source'>): string {
  const parts = [row.category];
  if (row.tags) {
    parts.push(row.tags.split(' ').join(', '));
  }
  if (row.source && row.source !== 'workspace') {
    parts.push(row.source);
  }
  parts.push(`used ${row.hits}×`, `injected ${row.injected}×`);
  return parts.join(' · ');
}

/** "0.62: cosine 0.52 (raw 0.87) + keywords 0.40" */
export function hitMeta(hit: Pick<MemoryHit, 'score' | 'why' | 'category'>): string {
  return `${hit.category} · ${hit.score.toFixed(2)}: ${hit.why}`;
}

export function shortText(text: string, limit = 300): string {
  const flat = text.split(/\s+/).join(' ').trim();
  return flat.length <= limit ? flat : `${flat.slice(0, limit - 1)}…`;
}

interface Listed {
  id: number;
  text: string;
  meta: string;
}

export function MemoryTab(): React.ReactElement {
  const [query, setQuery] = React.useState('');
  const [listed, setListed] = React.useState<Listed[]>([]);
  const [problem, setProblem] = React.useState<string | null>(null);
  const [searched, setSearched] = React.useState<string | null>(null);

  const load = React.useCallback(async (q: string) => {
    setProblem(null);
    try {
      if (q.trim()) {
        const hits = await memoryApi.search(q.trim());
        setListed(hits.map(h => ({ id: h.id, text: h.text, meta: hitMeta(h) })));
        setSearched(q.trim());
      } else {
        const rows = await memoryApi.rows();
        setListed(rows.map(r => ({ id: r.id, text: r.text, meta: rowMeta(r) })));
        setSearched(null);
      }
    } catch (error) {
      setProblem(String((error as Error).message ?? error));
    }
  }, []);

  React.useEffect(() => {
    void load('');
  }, [load]);

  const forget = async (id: number) => {
    try {
      await memoryApi.forget(id);
    } catch (error) {
      setProblem(String((error as Error).message ?? error));
    }
    await load(searched ?? '');
  };

  return (
    <div className="jp-nbagent-memory">
      <form
        className="jp-nbagent-memory-search"
        onSubmit={e => {
          e.preventDefault();
          void load(query);
        }}
      >
        <input
          className="jp-nbagent-memory-query"
          aria-label="Search project memory"
          placeholder="Search project memory (empty: list all)"
          value={query}
          onChange={e => setQuery(e.target.value)}
        />
        <button className="jp-Button" type="submit">
          {query.trim() ? 'Search' : 'List'}
        </button>
      </form>
      {problem && <div className="jp-nbagent-problem">{problem}</div>}
      {listed.length === 0 && !problem && (
        <div className="jp-nbagent-empty">{searched ? 'Nothing relevant found.' : 'Project memory is empty.'}</div>
      )}
      <ul className="jp-nbagent-memory-list">
        {listed.map(item => (
          <li key={item.id} className="jp-nbagent-memory-entry" data-id={item.id}>
            <div className="jp-nbagent-memory-text" title={item.text}>
              {shortText(item.text)}
            </div>
            <div className="jp-nbagent-memory-meta">{item.meta}</div>
            <button className="jp-Button jp-nbagent-memory-forget" title="Forget this entry" onClick={() => void forget(item.id)}>
              Forget
            </button>
          </li>
        ))}
      </ul>
    </div>
  );
}
