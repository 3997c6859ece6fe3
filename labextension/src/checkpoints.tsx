/**
 * The "files changed" line of a finished turn and its Undo / Redo buttons (docs/checkpoints.md).
 * Kept apart from the panel's state and views: the panel passes a turn's checkpoint and the
 * session's undo/redo targets; the buttons send `undo` / `redo` over the session socket and the
 * server's `checkpoint` event updates every tab. After an undo that could not restore every kernel
 * variable, the plan of restart and replay the kernel made is shown under the buttons; "Restart and
 * replay" asks for confirmation, then sends `replay` (the server runs the plan it holds, never code from
 * here) and the `kernel_replayed` event shows where it got to.
 */
import * as React from 'react';

export interface CheckpointInfo {
  turn: number;
  files: string[];
  undone: boolean;
  /** After an undo or redo: the kernel variables it bound again, and what it could not restore. */
  names?: string[];
  not_restored?: string[];
  /** The restart-and-replay plan the undo offered (the checkpoint event's `replay`), and its outcome once run. */
  replay?: { [k: string]: unknown }[];
  replayed?: { [k: string]: unknown } | null;
}

/** One cell of a restart-and-replay plan, as the checkpoint event carries it. */
export interface ReplayCellInfo {
  execution_count: number;
  cell_id: string | null;
  seconds: number | null;
  origin: string;
  line: string;
}

export interface CheckpointBarProps {
  checkpoint: CheckpointInfo;
  /** The turn /undo and /redo would act on now (null: none). */
  undoTurn: number | null;
  redoTurn: number | null;
  busy: boolean;
  onUndo: (turn: number) => void;
  onRedo: (turn: number) => void;
  /** Run the plan on offer for ``turn`` (sent only after the user confirmed). */
  onReplay?: (turn: number) => void;
}

const SHOWN = 8;

export function filesLine(files: string[]): string {
  if (files.length === 0) {
    return 'kernel variables changed'; // a turn that changed only the kernel (its kernel_changed lines say what)
  }
  const shown = files.slice(0, SHOWN).join(', ');
  const more = files.length > SHOWN ? ` and ${files.length - SHOWN} more` : '';
  return `${files.length} file${files.length === 1 ? '' : 's'} changed: ${shown}${more}`;
}

/** What the last undo or redo did to the kernel's variables ("" when it touched none). */
export function kernelRestoreLine(checkpoint: CheckpointInfo): string {
  const names = checkpoint.names ?? [];
  const missed = checkpoint.not_restored ?? [];
  const parts = [];
  if (names.length > 0) {
    parts.push(`kernel variables ${checkpoint.undone ? 'restored' : 'bound again'}: ${names.slice(0, SHOWN).join(', ')}`);
  }
  if (missed.length > 0) {
    parts.push(`not restored: ${missed.join('; ')}`);
  }
  return parts.join(' · ');
}

/** The plan's cells, read defensively (the event is data from the server, typed loosely). */
export function replayCells(checkpoint: CheckpointInfo): ReplayCellInfo[] {
  return (checkpoint.replay ?? []).map(c => ({
    execution_count: typeof c.execution_count === 'number' ? c.execution_count : 0,
    cell_id: typeof c.cell_id === 'string' ? c.cell_id : null,
    seconds: typeof c.seconds === 'number' ? c.seconds : null,
    origin: typeof c.origin === 'string' ? c.origin : '',
    line: typeof c.line === 'string' ? c.line : ''
  }));
}

/** The plan's total time as the user reads it ("about 3.2 s", "and more" when some cell was not timed). */
export function replayTotal(cells: ReplayCellInfo[]): string {
  const timed = cells.filter(c => c.seconds !== null);
  if (timed.length === 0) {
    // The usual case in the panel: the user's cells ran before nbagent's timing was loaded in the kernel
    // and without JupyterLab's "Record timing"; "about 0.0 s and more" would understate it.
    return 'time not known (no cell was timed)';
  }
  const total = timed.reduce((sum, c) => sum + (c.seconds ?? 0), 0);
  return `about ${total.toFixed(1)} s` + (timed.length < cells.length ? ' and more (some cells were not timed)' : '');
}

/** What the replay did: "replayed 3 cell(s)" or where it stopped, with the notebook cell id and the error. */
export function replayOutcomeLine(replayed: { [k: string]: unknown }): string {
  const ran = Array.isArray(replayed.ran) ? replayed.ran : [];
  if (typeof replayed.failed !== 'number') {
    return `replayed ${ran.length} cell(s)`;
  }
  const where = typeof replayed.failed_cell_id === 'string' ? `, notebook cell ${replayed.failed_cell_id}` : '';
  const error = typeof replayed.error === 'string' ? `: ${replayed.error}` : '';
  return `replay stopped at cell [${replayed.failed}] (ran ${ran.length} before it${where})${error}`;
}

export interface ReplayOfferProps {
  turn: number;
  cells: ReplayCellInfo[];
  busy: boolean;
  /** The user clicked "Restart and replay" once: the confirmation is shown. */
  confirming: boolean;
  onAsk: () => void;
  onConfirm: () => void;
  onCancel: () => void;
}

/** The plan (one row per cell: its count, notebook cell id, time and first line) and the two-step button. */
export function ReplayOffer(props: ReplayOfferProps): React.ReactElement {
  const { cells, busy, confirming } = props;
  return (
    <div className="jp-nbagent-replay" data-turn={props.turn}>
      <div className="jp-nbagent-replay-title">
        restart and replay would clear the kernel's variables and run {cells.length} cell(s), {replayTotal(cells)}:
      </div>
      <ol className="jp-nbagent-replay-cells">
        {cells.map(c => (
          <li key={`${c.execution_count}-${c.cell_id ?? ''}`} className="jp-nbagent-replay-cell" data-cell-id={c.cell_id ?? ''}>
            <span className="jp-nbagent-replay-count">[{c.execution_count}]</span>{' '}
            <span className="jp-nbagent-replay-where">{c.cell_id ? `cell ${c.cell_id}` : 'not in the notebook'}</span>{' '}
            <span className="jp-nbagent-replay-time">{c.seconds !== null ? `${c.seconds.toFixed(2)} s` : 'not timed'}</span>{' '}
            <code className="jp-nbagent-replay-line">{c.line}</code>
          </li>
        ))}
      </ol>
      {!confirming && (
        <button className="jp-Button jp-nbagent-replay-ask" disabled={busy} onClick={props.onAsk}>
          Restart and replay…
        </button>
      )}
      {confirming && (
        <span className="jp-nbagent-replay-confirm">
          <button className="jp-Button jp-mod-warn jp-nbagent-replay-run" disabled={busy} onClick={props.onConfirm}>
            Confirm: clear the variables and run {cells.length} cell(s)
          </button>
          <button className="jp-Button jp-nbagent-replay-cancel" onClick={props.onCancel}>
            Cancel
          </button>
        </span>
      )}
    </div>
  );
}

function ReplaySection(props: { checkpoint: CheckpointInfo; busy: boolean; onReplay?: (turn: number) => void }): React.ReactElement | null {
  const [confirming, setConfirming] = React.useState(false);
  const { checkpoint } = props;
  if (checkpoint.replayed) {
    return <div className="jp-nbagent-replay-outcome">{replayOutcomeLine(checkpoint.replayed)}</div>;
  }
  const cells = replayCells(checkpoint);
  if (!checkpoint.undone || cells.length === 0 || !props.onReplay) {
    return null;
  }
  const onReplay = props.onReplay;
  return (
    <ReplayOffer
      turn={checkpoint.turn}
      cells={cells}
      busy={props.busy}
      confirming={confirming}
      onAsk={() => setConfirming(true)}
      onCancel={() => setConfirming(false)}
      onConfirm={() => {
        setConfirming(false);
        onReplay(checkpoint.turn);
      }}
    />
  );
}

export function CheckpointBar(props: CheckpointBarProps): React.ReactElement {
  const { checkpoint, undoTurn, redoTurn, busy } = props;
  const tooltip = checkpoint.files.slice(0, 50).join('\n');
  const canUndo = !checkpoint.undone && undoTurn === checkpoint.turn && !busy;
  const canRedo = checkpoint.undone && redoTurn === checkpoint.turn && !busy;
  return (
    <div className="jp-nbagent-checkpoint" data-turn={checkpoint.turn}>
      <span className="jp-nbagent-checkpoint-files">
        {checkpoint.undone ? 'undone: ' : ''}
        {filesLine(checkpoint.files)}
      </span>
      {kernelRestoreLine(checkpoint) && <span className="jp-nbagent-checkpoint-kernel">{kernelRestoreLine(checkpoint)}</span>}
      {!checkpoint.undone && (
        <button
          className="jp-Button jp-nbagent-undo"
          disabled={!canUndo}
          title={canUndo ? `put back as before turn ${checkpoint.turn}:\n${tooltip}` : 'undo the later turns first'}
          onClick={() => props.onUndo(checkpoint.turn)}
        >
          Undo
        </button>
      )}
      {checkpoint.undone && (
        <button
          className="jp-Button jp-nbagent-redo"
          disabled={!canRedo}
          title={canRedo ? `re-apply turn ${checkpoint.turn}:\n${tooltip}` : 'redo the earlier turns first'}
          onClick={() => props.onRedo(checkpoint.turn)}
        >
          Redo
        </button>
      )}
      <ReplaySection checkpoint={checkpoint} busy={busy} onReplay={props.onReplay} />
    </div>
  );
}
