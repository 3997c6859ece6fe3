"""One checked union of every event: each event class is frozen, typed by a Literal, and in AnyEvent."""

from __future__ import annotations

import dataclasses
import inspect
import typing

import pytest

from nbagent import events as ev


def _event_classes() -> list[type[ev.Event]]:
    """Every concrete event class nbagent.events defines (found by walking the module, not the union)."""
    return [cls for _, cls in inspect.getmembers(ev, inspect.isclass)
            if issubclass(cls, ev.Event) and cls is not ev.Event and cls.__module__ == ev.__name__]


def test_every_event_class_is_in_the_union():
    union = set(typing.get_args(ev.AnyEvent))
    missing = [cls.__name__ for cls in _event_classes() if cls not in union]
    assert not missing, f"event classes missing from AnyEvent: {missing}"
    assert set(ev.EVENT_TYPES.values()) == union
    assert {"ContextNote", "Checkpoint", "KernelReplayed"} <= {cls.__name__ for cls in union}


def test_the_check_sees_a_class_left_out(monkeypatch):
    @ev._event
    class Stray(ev.Event):
        type: typing.Literal["stray"] = dataclasses.field(init=False, default="stray")

    Stray.__module__ = ev.__name__
    monkeypatch.setattr(ev, "Stray", Stray, raising=False)
    with pytest.raises(AssertionError, match="Stray"):
        test_every_event_class_is_in_the_union()


@pytest.mark.parametrize("cls", typing.get_args(ev.AnyEvent), ids=lambda c: c.__name__)
def test_each_event_is_frozen_and_typed_by_a_literal(cls):
    hints = typing.get_type_hints(cls)
    assert typing.get_origin(hints["type"]) is typing.Literal
    assert typing.get_args(hints["type"]) == (cls().type,)
    event = cls()
    with pytest.raises(dataclasses.FrozenInstanceError):
        event.turn_id = "t1"  # type: ignore[misc]
    assert ev.event_from_dict(event.to_dict()) == event


def test_vocabulary_fields_use_the_literal_aliases():
    assert typing.get_type_hints(ev.ToolResult)["status"] == ev.ToolStatus
    assert typing.get_type_hints(ev.TurnEnd)["reason"] == ev.TurnEndReason
    assert typing.get_type_hints(ev.ApprovalDecision)["decision"] == ev.Decision
    assert typing.get_type_hints(ev.Checkpoint)["action"] == ev.CheckpointAction
