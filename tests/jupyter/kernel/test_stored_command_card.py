"""Issue 26, finding 1, in the widget: a command that came with the workspace's database is asked about
on the turn's approval card, shown whole and escaped, and runs only once approved there."""

from __future__ import annotations

import pytest
import queue

from nbagent import Agent
from nbagent import events as ev
from nbagent.attached.store import ContextStore
from nbagent.jupyter.widgets.turn import TurnView
from nbagent.store.db import Database, workspace_db_path
from nbagent.testing.scripted import ScriptedModel

pytestmark = pytest.mark.process


def test_a_stored_command_is_asked_about_on_a_widget_card_showing_it_whole(tmp_path, monkeypatch):
    monkeypatch.setenv("NBAGENT_CONFIG_DIR", str(tmp_path / "config"))
    command = "touch ran; echo '<b>gpu</b>'"
    db = Database(workspace_db_path(tmp_path))
    ContextStore(db).attach("gpu", "command", spec=command)
    db.close()
    events: queue.Queue = queue.Queue()
    with Agent(workspace=tmp_path, model=ScriptedModel(["ok"]), context_poll=False) as agent:
        agent.subscribe(events.put)
        done = agent.submit("hello")
        seen = [events.get(timeout=30)]
        while not isinstance(seen[-1], ev.ApprovalRequest):
            seen.append(events.get(timeout=30))
        view = TurnView(turn_id=seen[-1].turn_id, decide=agent.decide)
        for event in seen:
            view.handle(event)
        view.flush()
        (card,) = view.cards.values()
        assert "Approve context_command?" in card.title.value
        assert "touch ran; echo &#x27;&lt;b&gt;gpu&lt;/b&gt;&#x27;" in card.body.value  # whole, escaped
        assert not (tmp_path / "ran").exists()
        card.approve_button.click()
        assert done.result(timeout=30).reason == "done" and (tmp_path / "ran").exists()
