"""A task for `inspect eval` in the tests: its own mock model (no network), a file to read."""

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import includes


@task
def read_the_note():
    outputs = [ModelOutput.for_tool_call("mockllm/model", "read_file", {"path": "note.txt"}),
               ModelOutput.from_content("mockllm/model", "The note says: feed the cat.")]
    for output in outputs:
        output.usage = ModelUsage(input_tokens=500, output_tokens=10, total_tokens=510)
    return Task(dataset=[Sample(input="What does note.txt say?", target="feed the cat",
                                files={"note.txt": "feed the cat\n"})],
                scorer=includes(), sandbox="local", model=get_model("mockllm/model", custom_outputs=outputs))
