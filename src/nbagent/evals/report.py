"""The eval report: results.csv, report.html (pass rates, intervals, comparisons, the per-task grid, plots) and failures' transcripts.

Everything shown came from tasks, checks and models, so all of it is escaped; the plots are inline
SVG drawn here (a few bars and whiskers: no plotting library to require, and the file stands alone).
In Jupyter the same HTML renders in the cell: ``EvalReport`` has ``_repr_html_``, and a front end
registers how to show it (``register_display``) so that this module never imports one.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Callable

from ..render.escape import escape_attribute, escape_controls, escape_html, truncate
from . import stats

HARNESS_NOTE = ("A pass rate measures one model with this harness on this suite. A scripted or offline "
                "model's pass rate measures the harness, not an agent: read the offline model's as a floor.")

_DISPLAYS: list[Callable[[Any], None]] = []


def register_display(show: Callable[[Any], None]) -> None:
    """A front end's way to show a report where the user is (Jupyter: IPython's display)."""
    if show not in _DISPLAYS:
        _DISPLAYS.append(show)


def show(report: "EvalReport") -> None:
    for display in _DISPLAYS:
        display(report)


class EvalReport:
    """The report of one eval run; renders as HTML in Jupyter."""

    def __init__(self, frame: Any):
        self.frame = frame
        self.info: dict[str, Any] = dict(frame.attrs)

    def _repr_html_(self) -> str:
        return body_html(self.frame, self.info, link_sessions=False)

    def html(self) -> str:
        return page_html(self.frame, self.info)


def write_results(frame: Any, folder: Path) -> None:
    """results.csv, run.json (what was run), the failures' transcripts and report.html in ``folder``."""
    frame.to_csv(folder / "results.csv", index=False)
    (folder / "run.json").write_text(json.dumps(frame.attrs, indent=1, default=str), encoding="utf-8")
    write_transcripts(frame, folder)
    (folder / "report.html").write_text(page_html(frame, dict(frame.attrs)), encoding="utf-8")
    show(EvalReport(frame))


def write_transcripts(frame: Any, folder: Path) -> None:
    """``sessions/<id>.txt`` for every failed row with a session: what the agent did, as plain text."""
    from ..store.sessions import SessionStore

    failed = [sid for sid in frame.loc[~frame["passed"], "session_id"] if isinstance(sid, str)]
    if not failed:
        return
    (folder / "sessions").mkdir(exist_ok=True)
    with SessionStore(folder) as store:
        for sid in failed:
            lines = [f"session {sid}   (nbagent sessions show {sid} -w {folder})", ""]
            lines += [transcript_line(row["message"]) for row in store.messages(sid)]
            (folder / "sessions" / f"{sid}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")


def transcript_line(message: dict[str, Any]) -> str:
    role = message.get("role", "?")
    if role == "tool":
        head = f"[{message.get('name')}{' error' if message.get('is_error') else ''}]"
        return f"--- tool {head}\n{escape_controls(str(message.get('content', '')))}"
    calls = "".join(f"\n  -> {c.get('name')}({c.get('arguments')})" for c in message.get("tool_calls") or [])
    return f"--- {role}\n{escape_controls(str(message.get('content') or ''))}{escape_controls(calls)}"


def page_html(frame: Any, info: dict[str, Any]) -> str:
    title = f"nbagent eval: {info.get('suite', 'suite')}"
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{_e(title)}</title>"
            f"<style>{STYLE}</style></head><body>{body_html(frame, info, link_sessions=True)}</body></html>")


STYLE = """body{font-family:system-ui,sans-serif;margin:2em;max-width:80em}
.nbe table{border-collapse:collapse;margin:.5em 0 1.2em}.nbe td,.nbe th{border:1px solid #ccc;padding:.2em .5em;
text-align:left;font-size:90%}.nbe .pass{background:#d9f2d9}.nbe .fail{background:#f7d4d4}
.nbe .part{background:#fbeec8}.nbe .note{color:#555}.nbe svg text{font-size:11px;font-family:sans-serif}"""


def body_html(frame: Any, info: dict[str, Any], *, link_sessions: bool) -> str:
    summary = stats.summary(frame)
    parts = [f"<div class='nbe'><style>{STYLE}</style>", _header(info, frame), "<h3>Pass rate</h3>",
             _summary_table(summary), _bars(summary), _published(info), "<h3>Comparisons</h3>", _comparisons(frame),
             "<h3>Tasks</h3>", _grid(frame, info, link_sessions), "</div>"]
    return "\n".join(parts)


def _header(info: dict[str, Any], frame: Any) -> str:
    version = info.get("suite_version") or "unversioned"
    rows = [("suite", f"{info.get('suite')} (version {version}, digest {info.get('suite_digest')}, "
                      f"{len(info.get('tasks', []))} tasks)"),
            ("repeats", str(info.get("repeat"))), ("nbagent", str(info.get("nbagent_version"))),
            ("started", str(info.get("started"))), ("results", str(info.get("out")))]
    for arm in info.get("arms", []):
        extra = ", ".join(f"{k}={v}" for k, v in (arm.get("options") or {}).items())
        floor = " (offline model: its score is a floor)" if arm.get("offline") else ""
        rows.append((f"model {arm['label']}", f"{arm.get('model')} at {arm.get('endpoint')}{floor}"
                                               + (f"; {extra}" if extra else "")))
    table = "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in rows)
    return f"<h2>nbagent eval</h2><table>{table}</table><p class='note'>{_e(HARNESS_NOTE)}</p>"


def _summary_table(summary: Any) -> str:
    head = ("<tr><th>model</th><th>pass rate</th><th>95% interval</th><th>passed</th><th>cost per solved</th>"
            "<th>seconds per solved</th><th>steps per task</th><th>tokens in / cached / out, all runs together"
            "</th></tr>")
    rows = "".join(
        f"<tr><td>{_e(r.model)}</td><td>{r.pass_rate:.0%}</td><td>{r.ci_low:.0%} to {r.ci_high:.0%}"
        f"<br><span class='note'>{_e(r.interval)}</span></td><td>{r.passed} of {r.runs * r.tasks}</td>"
        f"<td>{_money(r.cost_per_solved)}</td><td>{_num(r.seconds_per_solved, '{:.1f}')}</td>"
        f"<td>{r.steps_per_task:.1f}</td><td>{r.input_tokens} / {r.cached_tokens} / {r.output_tokens}</td></tr>"
        for r in summary.itertuples())
    return f"<table>{head}{rows}</table>"


def _published(info: dict[str, Any]) -> str:
    """A public benchmark's published figures beside this run's, each saying whether it is like for like."""
    figures = info.get("published")
    if not figures:
        return ""
    rows = "".join(
        f"<tr><td>{_e(f['benchmark'])}</td><td>{_e(f['split'])}</td><td>{f['pass_rate']:.1%}</td><td>{_e(f['who'])}</td>"
        f"<td>{_e(f['date'])}</td><td>{_e(f['source'])}</td>"
        f"<td>{'yes' if f['like_for_like'] else _e('no: ' + f['why_not'])}</td></tr>" for f in figures)
    data = f"<p class='note'>This run: {_e(info.get('split'))}, {info.get('questions')} questions; data: {_e(info.get('data'))}.</p>"
    return ("<h3>Published figures</h3>" + data + "<table><tr><th>benchmark</th><th>split</th><th>pass rate</th>"
            "<th>who</th><th>date</th><th>source</th><th>like for like</th></tr>" + rows + "</table>")


def _comparisons(frame: Any) -> str:
    table = stats.comparisons(frame)
    if table.empty:
        return "<p class='note'>One model: nothing to compare (give several models or configurations).</p>"
    rows = "".join(
        f"<tr><td>{_e(r.model)} vs {_e(r.baseline)}</td><td>{r.difference:+.0%}</td>"
        f"<td>{'' if math.isnan(r.ci_low) else f'{r.ci_low:+.0%} to {r.ci_high:+.0%}'}</td><td>{_e(r.verdict)}</td></tr>"
        for r in table.itertuples())
    return ("<table><tr><th>comparison</th><th>difference in pass rate</th><th>95% interval</th><th>verdict</th></tr>"
            f"{rows}</table>")


def _grid(frame: Any, info: dict[str, Any], link_sessions: bool) -> str:
    labels = list(dict.fromkeys(frame["model"]))
    head = "<tr><th>task</th>" + "".join(f"<th>{_e(label)}</th>" for label in labels) + "</tr>"
    body = []
    for task, rows in frame.groupby("task", sort=False):
        cells = [f"<td>{_e(task)}</td>"]
        for label in labels:
            runs = rows[rows["model"] == label]
            cells.append(_grid_cell(runs, info, link_sessions))
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table>{head}{''.join(body)}</table>"


def _grid_cell(runs: Any, info: dict[str, Any], link_sessions: bool) -> str:
    if runs.empty:
        return "<td></td>"
    passed, total = int(runs["passed"].sum()), len(runs)
    kind = "pass" if passed == total else ("fail" if passed == 0 else "part")
    failures = []
    for row in runs[~runs["passed"]].itertuples():
        command = f"nbagent sessions show {row.session_id} -w {info.get('out')}" if isinstance(row.session_id, str) else ""
        reason = _e(truncate(str(row.reason), 240, one_line=True))
        if command and link_sessions:
            failures.append(f"<br><a href='sessions/{escape_attribute(row.session_id)}.txt' title='{escape_attribute(command)}'>run {row.run}</a>: "
                            f"{reason}")
        else:
            failures.append(f"<br>run {row.run}: {reason}" + (f" <code>{_e(command)}</code>" if command else ""))
    return f"<td class='{kind}'>{passed}/{total}{''.join(failures)}</td>"


def _bars(summary: Any) -> str:
    """Pass rate per model as horizontal bars with their 95% interval as a whisker (inline SVG)."""
    width, label_w, bar_h, gap = 560, 180, 18, 8
    height = len(summary) * (bar_h + gap) + 24
    span = width - label_w - 20
    items = []
    for i, r in enumerate(summary.itertuples()):
        y = 8 + i * (bar_h + gap)
        x0, x1, x2 = label_w + r.ci_low * span, label_w + r.pass_rate * span, label_w + r.ci_high * span
        items.append(f"<text x='0' y='{y + 13}'>{_e(truncate(str(r.model), 28, one_line=True))}</text>"
                     f"<rect x='{label_w}' y='{y}' width='{r.pass_rate * span:.1f}' height='{bar_h}' fill='#7aa6d6'/>"
                     f"<line x1='{x0:.1f}' x2='{x2:.1f}' y1='{y + bar_h / 2}' y2='{y + bar_h / 2}' stroke='#222'/>"
                     f"<line x1='{x0:.1f}' x2='{x0:.1f}' y1='{y + 4}' y2='{y + bar_h - 4}' stroke='#222'/>"
                     f"<line x1='{x2:.1f}' x2='{x2:.1f}' y1='{y + 4}' y2='{y + bar_h - 4}' stroke='#222'/>"
                     f"<text x='{min(x1, x2) + 4 if x2 < width - 40 else x1 - 34:.1f}' y='{y + 13}'>{r.pass_rate:.0%}</text>")
    axis = "".join(f"<text x='{label_w + f * span - 8:.1f}' y='{height - 4}'>{f:.0%}</text>" for f in (0, 0.5, 1))
    return (f"<svg width='{width}' height='{height}' role='img' aria-label='pass rate per model'>"
            f"{''.join(items)}{axis}</svg>")


def _e(text: Any) -> str:
    return escape_html(str(text))


def _money(value: float) -> str:
    return "unknown" if value is None or math.isnan(value) else f"${value:.4f}"


def _num(value: float, fmt: str) -> str:
    return "–" if value is None or math.isnan(value) else fmt.format(value)
