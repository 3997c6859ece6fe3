/* The Check button: runs the notebook check (a copy of the active notebook in a fresh kernel, on the
 * server: nbagent.tools.nbcheck) and shows its report. The user's kernel and file are not touched. */

import * as React from 'react';
import { Dialog, showDialog } from '@jupyterlab/apputils';

import { api } from './api';
import { checkTitle } from './check';
import { OpenContextTracker, useRedrawOnChange } from './openContext';

export function CheckButton({ tracker }: { tracker: OpenContextTracker | null }): JSX.Element {
  const [running, setRunning] = React.useState(false);
  useRedrawOnChange(tracker);
  const notebook = tracker?.notebook ?? null;
  const run = async () => {
    if (!notebook) {
      return;
    }
    setRunning(true);
    let title: string;
    let text: string;
    try {
      const result = await api.checkNotebook(notebook);
      title = checkTitle(result.path, result.clean);
      text = result.text;
    } catch (e) {
      title = 'The check could not run';
      text = e instanceof Error ? e.message : String(e);
    } finally {
      setRunning(false);
    }
    await showDialog({ title, body: <pre className="jp-nbagent-check-report">{text}</pre>, buttons: [Dialog.okButton()] });
  };
  return (
    <button
      className="jp-nbagent-check"
      title="Run a copy of the active notebook top to bottom in a fresh kernel: failing cells, changed outputs, hidden state"
      onClick={run}
      disabled={!notebook || running}
    >
      {running ? 'Checking…' : 'Check'}
    </button>
  );
}
