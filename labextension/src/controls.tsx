/**
 * The session's own controls beside the prompt box: a model picker (the configured names and the
 * endpoint's /models list) and the approval mode, both always showing the current value. A change
 * applies to this session at once (a "settings" message: Agent.reconfigure on the server); it becomes
 * the user's default only through the Settings tab's "Keep as my defaults".
 */
import * as React from 'react';

import { PanelModel } from './model';
import { ApprovalMode } from './protocol';
import { approvalOptions, plain } from './settingsTab';

export const APPROVAL_HELP: Record<ApprovalMode, string> = {
  sandboxed: 'commands and checks run in the sandbox and file changes run without asking; code in your kernel, MCP tools and leaving the sandbox ask',
  ask: 'ask before every change',
  auto: 'approve every change',
  'read-only': 'deny every change'
};

/** What "Review before writing" does, for its tooltip. */
export const REVIEW_HELP =
  "The agent's notebook edits arrive as suggestions in the notebook: Apply or Reject each, nothing is written before";

/** The names to offer: the current model first if the lists lack it, then the listed ones. */
/** What the offline badge says when hovered: the answers come from a tiny local model, not a real one. */
export const OFFLINE_NOTE =
  'No endpoint is configured, so a 135M-parameter model on this machine answers: it shows how nbagent ' +
  'works and may invent what is in your files. Point nbagent at a real model (OPENAI_API_KEY, or ' +
  'OPENAI_BASE_URL and NBAGENT_MODEL) for real work.';

export function modelOptions(current: string, listed: string[] | undefined): string[] {
  const names = listed ?? [];
  return current && !names.includes(current) ? [current, ...names] : names;
}

export function SessionControls({ model }: { model: PanelModel }): React.ReactElement {
  const settings = model.state.settings as {
    model?: string;
    approval?: ApprovalMode;
    offline?: boolean;
    sandbox?: string;
    sandbox_active?: boolean;
    review_before_writing?: boolean;
  };
  const current = settings.model ?? '';
  const approval = settings.approval ?? 'ask';
  React.useEffect(() => {
    if (model.models === null) {
      void model.loadModels();
    }
  }, [model]);
  const options = modelOptions(current, model.models?.models);
  return (
    <div className="jp-nbagent-controls">
      <label className="jp-nbagent-control">
        <span className="jp-nbagent-control-label">Model</span>
        <select
          className="jp-nbagent-model-picker"
          value={current}
          title={model.models?.problem ? `The endpoint listed no models: ${plain(model.models.problem, 300)}` : 'The model of this session'}
          onFocus={() => void model.loadModels()}
          onChange={e => model.reconfigure({ model: e.target.value })}
        >
          {options.length === 0 && <option value="">(the configured model)</option>}
          {options.map(name => (
            <option key={name} value={name}>
              {plain(name, 80)}
            </option>
          ))}
        </select>
      </label>
      {settings.offline && (
        <span className="jp-nbagent-offline-badge" role="note" title={OFFLINE_NOTE}>
          offline model
        </span>
      )}
      <label className="jp-nbagent-control">
        <span className="jp-nbagent-control-label">Approval</span>
        <select
          className="jp-nbagent-approval-mode"
          data-mode={approval}
          value={approval}
          title={`Approval mode of this session: ${APPROVAL_HELP[approval] ?? approval}`}
          onChange={e => model.reconfigure({ approval: e.target.value as ApprovalMode })}
        >
          {approvalOptions()}
        </select>
      </label>
      <label className="jp-nbagent-control" title={REVIEW_HELP}>
        <input
          type="checkbox"
          className="jp-nbagent-review-first"
          checked={!!settings.review_before_writing}
          onChange={e => model.reconfigure({ review_before_writing: e.target.checked })}
        />
        <span className="jp-nbagent-control-label">Review before writing</span>
      </label>
      {settings.sandbox !== undefined && (
        <span
          className={`jp-nbagent-sandbox-badge${settings.sandbox_active ? '' : ' jp-mod-unconfined'}`}
          role="note"
          title={plain(settings.sandbox, 300)}
        >
          {settings.sandbox_active ? 'sandbox on' : 'no sandbox'}
        </span>
      )}
    </div>
  );
}
