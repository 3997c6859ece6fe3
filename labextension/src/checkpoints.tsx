/**
 * The "files changed" line of a finished turn and its Undo / Redo buttons (docs/checkpoints.md).
 * Kept apart from the panel's state and views: the panel passes a turn's checkpoint and the
 * session's undo/redo targets; the buttons send `undo` / `redo` over the session socket and the
 * server's `checkpoint` event updates every tab.
 */
import * as React from 'react';

export interface CheckpointInfo {
  turn: number;
  files: string[];
  undone: boolean;
  /** After an undo or redo: the kernel variables it bound again, and what it could not restore. */
  names?: string[];
  not_restored?: string[];
}

export interface CheckpointBarProps {
  checkpoint: CheckpointInfo;
  /** The turn /undo and /redo would act on now (null: none). */
  undoTurn: number | null;
  redoTurn: number | null;
  busy: boolean;
  onUndo: (turn: number) => void;
  onRedo: (turn: number) => void;
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
    </div>
  );
}
