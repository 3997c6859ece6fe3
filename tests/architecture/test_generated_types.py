"""The JSON Schema and the panel's TypeScript types are generated from the Python dataclasses and never drift."""

from __future__ import annotations

import pytest
import json
import subprocess
import sys
from pathlib import Path

import jsonschema  # nbformat's dependency: always installed with the test extra

from nbagent import events as ev
from nbagent.render.agent_state import AgentState
from tests.paths import CHECKOUT

ROOT = CHECKOUT
SEQUENCES = sorted((ROOT / "tests" / "fixtures" / "event_sequences").glob("*.json"))


@pytest.mark.process
def test_the_committed_schema_and_typescript_are_what_the_script_writes():
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_types.py"), "--check"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr


def test_the_schema_describes_every_event_and_the_state_exactly():
    schema = json.loads((ROOT / "docs" / "nbagent.schema.json").read_text())
    defs = schema["$defs"]
    union = {ref["$ref"].rsplit("/", 1)[1] for ref in defs["AgentEvent"]["oneOf"]}
    assert {defs[name]["properties"]["type"]["const"] for name in union} == set(ev.EVENT_TYPES)
    for type_name, cls in ev.EVENT_TYPES.items():
        event = defs["ErrorEvent" if cls.__name__ == "Error" else cls.__name__]
        assert set(event["required"]) == set(cls().to_dict()), type_name  # every field, always present
    assert set(defs["AgentState"]["required"]) == set(AgentState().to_dict())


def test_recorded_events_and_states_validate_against_the_schema():
    schema = json.loads((ROOT / "docs" / "nbagent.schema.json").read_text())
    validator = jsonschema.Draft202012Validator(schema)
    assert SEQUENCES
    for path in SEQUENCES:
        data = json.loads(path.read_text())
        for event in data["events"]:
            validator.validate({"event": event, "snapshot": data["expected"]})
