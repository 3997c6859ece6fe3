/**
 * The panel's Settings tab: the session's agent settings, editable (model, approval mode, tool sets:
 * each change applies to this session at once, and becomes the user's default only through "Keep as my
 * defaults", which writes JupyterLab's settings registry), and the MCP servers it may use, with their status and tools (GET /nbagent/api/mcp?session=<id>:
 * the live agent's servers when the session is open, else the configured ones, none started).
 * Tool lists a server changed at run time (tools/list_changed) arrive in the state's
 * ``settings.mcp_tools`` and replace the fetched ones. Server names, targets, errors and tool names
 * come from configuration files and the servers themselves, which may be hostile: everything is
 * rendered as React text (never as HTML), control characters shown as escapes, long text cut.
 */
import * as React from 'react';

import { api, request } from './api';
import { HIDDEN } from './hiddenChars';
import type { PanelModel } from './model';
import { APPROVAL_MODES, ApprovalMode } from './protocol';

/** The approval modes as a select's options (the controls and the Settings tab share them). */
export function approvalOptions(): React.ReactElement[] {
  return APPROVAL_MODES.map(mode => (
    <option key={mode} value={mode}>
      {mode}
    </option>
  ));
}

export interface MCPServerRow {
  name: string;
  source: string;
  transport: string;
  target: string;
  enabled: boolean;
  status: string;
  error: string | null;
  trust: Record<string, string>;
  tools: string[];
}

export interface MCPListing {
  servers: MCPServerRow[];
  problems: string[];
}

export const mcpApi = {
  list: (sessionId: string | null) =>
    request<MCPListing>(sessionId ? `mcp?${new URLSearchParams({ session: sessionId })}` : 'mcp')
};

/** Text from a hostile source, safe to show on one line: control characters escaped, cut to ``limit``. */
export function plain(text: unknown, limit = 200): string {
  const shown = String(text ?? '')
    .replace(/\n/g, ' ')
    .replace(/\t/g, '\\u0009')
    .replace(HIDDEN, c => {
      const code = c.codePointAt(0)!;
      return code > 0xffff ? `\\U${code.toString(16).padStart(8, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
    });
  return shown.length <= limit ? shown : `${shown.slice(0, limit - 1)}…`;
}

/** An approval request of an outside agent's call at /nbagent/mcp: it belongs to no turn of this session's
 * agent, and the server names such calls mcp_<random>. */
export function isOutsideRequest(approval: { call_id: string; turn_id: string }): boolean {
  return !approval.turn_id && approval.call_id.startsWith('mcp_');
}

/** "stdio · workspace · tool set on · trust *: ask" */
export function serverMeta(row: MCPServerRow): string {
  const trust = Object.entries(row.trust ?? {}).map(([k, v]) => `${plain(k, 40)}: ${plain(v, 20)}`).join(', ') || '*: ask';
  return [row.transport, row.source, `tool set ${row.enabled ? 'on' : 'off'}`, `trust ${trust}`].map(x => plain(x)).join(' · ');
}

/** The tools to show: the live list from a tools/list_changed (``settings.mcp_tools``) over the fetched one. */
export function toolsOf(row: MCPServerRow, live: unknown): string[] {
  const lists = live && typeof live === 'object' ? (live as Record<string, unknown>) : {};
  const fresh = lists[row.name];
  return Array.isArray(fresh) ? fresh.map(String) : row.tools ?? [];
}

export function MCPServers({ listing, live }: { listing: MCPListing; live?: unknown }): React.ReactElement {
  return (
    <div className="jp-nbagent-mcp">
      {listing.problems.map((p, i) => (
        <div key={i} className="jp-nbagent-problem">{plain(p, 500)}</div>
      ))}
      {listing.servers.length === 0 && (
        <div className="jp-nbagent-empty">No MCP servers configured (.nbagent/mcp.json; see docs/mcp.md).</div>
      )}
      {listing.servers.map(row => {
        const tools = toolsOf(row, live);
        return (
          <div key={row.name} className="jp-nbagent-mcp-server" data-status={plain(row.status, 20)}>
            <div className="jp-nbagent-mcp-title">
              <b>{plain(row.name, 80)}</b> <span className="jp-nbagent-mcp-status">{plain(row.status, 20)}</span>
            </div>
            <div className="jp-nbagent-mcp-meta">{serverMeta(row)}</div>
            <div className="jp-nbagent-mcp-target">{plain(row.target)}</div>
            {row.error && <div className="jp-nbagent-mcp-error">{plain(row.error, 500)}</div>}
            <ul className="jp-nbagent-mcp-tools">
              {tools.map(t => (
                <li key={t}>{plain(t, 100)}</li>
              ))}
            </ul>
          </div>
        );
      })}
    </div>
  );
}

export function SettingsTab({ model }: { model: PanelModel }): React.ReactElement {
  const sessionId = model.state.session_id;
  const settings = model.state.settings;
  const [listing, setListing] = React.useState<MCPListing | null>(null);
  const [problem, setProblem] = React.useState<string | null>(null);
  const load = React.useCallback(() => {
    mcpApi.list(sessionId).then(
      l => {
        setListing(l);
        setProblem(null);
      },
      e => setProblem(String(e?.message ?? e))
    );
  }, [sessionId]);
  React.useEffect(load, [load]);
  return (
    <div className="jp-nbagent-settings">
      <SessionSettings model={model} />
      <table className="jp-nbagent-settings-table">
        <tbody>
          {(['max_steps', 'workspace'] as const).filter(k => settings[k] !== undefined).map(k => (
            <tr key={k}>
              <th scope="row">{k}</th>
              <td>{plain(settings[k], 300)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <div className="jp-nbagent-mcp-header">
        <h3>MCP servers</h3>{' '}
        <button className="jp-nbagent-mcp-refresh" onClick={load}>Refresh</button>
      </div>
      {problem && <div className="jp-nbagent-problem">{plain(problem, 500)}</div>}
      {listing && <MCPServers listing={listing} live={settings.mcp_tools} />}
    </div>
  );
}

/** The tool sets a session may switch on: the server's list (GET settings), the session's own first. */
export function toolsetChoices(current: string[], available: string[]): string[] {
  return [...new Set([...available, ...current])];
}

/** Model, approval mode and tool sets of this session, each applied as it changes. */
function SessionSettings({ model }: { model: PanelModel }): React.ReactElement {
  const settings = model.state.settings as {
    model?: string;
    approval?: ApprovalMode;
    toolsets?: string[];
    enabled_toolsets?: string[];
    profile?: string;
  };
  const [name, setName] = React.useState(settings.model ?? '');
  const [available, setAvailable] = React.useState<string[]>([]);
  const [saved, setSaved] = React.useState(false);
  React.useEffect(() => setName(settings.model ?? ''), [settings.model]);
  React.useEffect(() => setSaved(false), [settings]); // "saved" speaks of the values it saved
  React.useEffect(() => {
    api.getSettings().then(s => setAvailable(s.available.toolsets), () => setAvailable([]));
    if (model.models === null) {
      void model.loadModels();
    }
  }, [model]);
  const on = settings.toolsets ?? [];
  // What the model really gets: the tool sets switched on that this session can use (the kernel set
  // only inside a kernel), as the agent reports them; the required one (core, or read in the offline
  // model's small profile) cannot be switched off.
  const really = settings.enabled_toolsets ?? on;
  const required = settings.profile === 'small' ? 'read' : 'core';
  const toggle = (toolset: string, checked: boolean) =>
    model.reconfigure({ toolsets: checked ? [...on, toolset] : on.filter(t => t !== toolset) });
  return (
    <form
      className="jp-nbagent-session-settings"
      aria-label="This session's settings"
      onSubmit={e => {
        e.preventDefault();
        if (name.trim() && name.trim() !== settings.model) {
          model.reconfigure({ model: name.trim() });
        }
      }}
    >
      <div className="jp-nbagent-setting">
        <label htmlFor="jp-nbagent-setting-model">Model</label>
        <input
          id="jp-nbagent-setting-model"
          className="jp-nbagent-setting-model"
          list="jp-nbagent-model-names"
          value={name}
          onChange={e => setName(e.target.value)}
        />
        <datalist id="jp-nbagent-model-names">
          {(model.models?.models ?? []).map(n => (
            <option key={n} value={n} />
          ))}
        </datalist>
        <button type="submit" className="jp-nbagent-setting-apply">Apply</button>
      </div>
      {model.models?.problem && <div className="jp-nbagent-setting-note">Listing the endpoint's models: {plain(model.models.problem, 300)}</div>}
      <div className="jp-nbagent-setting">
        <label htmlFor="jp-nbagent-setting-approval">Approval mode</label>
        <select
          id="jp-nbagent-setting-approval"
          className="jp-nbagent-setting-approval"
          value={settings.approval ?? 'ask'}
          onChange={e => model.reconfigure({ approval: e.target.value as ApprovalMode })}
        >
          {approvalOptions()}
        </select>
      </div>
      <fieldset className="jp-nbagent-setting-toolsets">
        <legend>Tool sets</legend>
        {toolsetChoices(on, available).map(t => (
          <label key={t} className="jp-nbagent-setting-toolset">
            <input type="checkbox" value={t} checked={really.includes(t)} disabled={t === required} onChange={e => toggle(t, e.target.checked)} />
            {plain(t, 64)}
          </label>
        ))}
      </fieldset>
      <div className="jp-nbagent-settings-hint">
        Changes apply to this session now.{' '}
        {model.saveDefaults ? (
          <button
            type="button"
            className="jp-nbagent-keep-defaults"
            onClick={() => void model.keepAsDefaults().then(() => setSaved(true))}
          >
            Keep as my defaults
          </button>
        ) : (
          'Defaults for new sessions: Settings › Settings Editor › nbagent.'
        )}
        {saved && <span role="status"> Saved as your defaults for new sessions.</span>}
      </div>
    </form>
  );
}
