"""The offline server's chat format: ChatML as written, tool results kept, text streamed, output capped.

llama-cpp-python's own ``chatml-function-calling`` format renders messages through a Jinja
environment with HTML autoescape on (``"`` reaches the model as ``&#34;``, code in tool results
is garbled and costs about four times the tokens), drops ``tool`` messages from the prompt,
ignores max_tokens when tools are offered, and streams an automatic tool choice through a
grammar that allows no text. This format keeps its idea (a short grammar-constrained decision
between ``message:`` and ``functions.<name>:``, then the answer or the JSON arguments) and
fixes those four things: the prompt is built with plain string joins (nothing escaped) and
tokenized so that message text can hold no special tokens, tool results go in as user turns
naming the tool, every generation is capped at
``min(max_tokens, cap)``, and the answer after ``message:`` streams token by token.

``render_segments``, ``render_prompt`` and ``decision_grammar`` are pure; the handler needs
llama_cpp and runs inside the server process that ``python -m nbagent.model.llama_format`` starts.
"""

from __future__ import annotations

import json
import sys
from typing import Any, Iterator, cast

FORMAT_NAME = "nbagent-chatml"
"""The name the handler is registered under (the server's --chat_format)."""

DEFAULT_CAP = 384
"""Tokens one request may generate at most, whatever max_tokens says (a client may send none)."""

ARGS_CAP = 160
"""Tokens the JSON arguments of one tool call may take."""

_END = "<|im_end|>"

_CALL_HOWTO = (
    "To call a function, answer with its name as functions.<name>: and a JSON object of its "
    "arguments on the next line. Otherwise answer with message: and your answer.")


def _text(content: Any) -> str:
    """Message content as text: a string, or the text parts of a list of typed parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def _tools_block(tools: list[dict[str, Any]]) -> str:
    lines = ["", "", "Functions you can call:"]
    for tool in tools:
        fn = tool["function"]
        args = ", ".join((fn.get("parameters") or {}).get("properties", {}))
        summary = (fn.get("description") or "").strip().split("\n", 1)[0]  # the first line says enough
        lines.append(f"functions.{fn['name']}({args}): {summary}")
    lines += ["", _CALL_HOWTO]
    return "\n".join(lines)


Segment = tuple[str, bool]
"""A piece of the prompt and whether it is markup: only markup may hold special tokens."""


def render_segments(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> list[Segment]:
    """The ChatML prompt for ``messages`` in pieces, ending with the assistant's turn; nothing is escaped.

    With tools, the system message lists them and earlier answers carry the ``message:`` /
    ``functions.<name>:`` prefixes the model is asked to write. A tool result becomes a user turn
    that names the tool (SmolLM2's template knows no tool role). Text in messages is never markup:
    a file holding ``<|im_end|><|im_start|>system`` stays text and cannot open a turn of its own.
    """
    names: dict[str, str] = {}
    out: list[Segment] = []
    if not messages or messages[0].get("role") != "system":
        messages = [{"role": "system", "content": ""}, *messages]
    for m in messages:
        role, content = m.get("role"), _text(m.get("content"))
        if role == "system":
            role, text = "system", content + (_tools_block(tools) if tools else "")
        elif role == "assistant":
            text = _assistant_text(m, content, bool(tools), names)
        elif role in ("tool", "function"):
            name = names.get(m.get("tool_call_id") or "", m.get("name") or "a function")
            role, text = "user", f"Result of {name}:\n{content}"
        else:
            role, text = "user", content
        out += [(f"<|im_start|>{role}\n", True), (text, False), (f"{_END}\n", True)]
    out.append(("<|im_start|>assistant\n", True))
    return [(text, markup) for text, markup in out if text]


def render_prompt(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> str:
    """The prompt as one string (what the model reads; see ``render_segments``)."""
    return "".join(text for text, _ in render_segments(messages, tools))


def tokenize(llama: Any, segments: list[Segment]) -> list[int]:
    """The prompt's tokens: special tokens are read in markup only, never in message text."""
    return [token for text, markup in segments
            for token in llama.tokenize(text.encode("utf-8"), add_bos=False, special=markup)]


def _assistant_text(m: dict[str, Any], content: str, tools: bool, names: dict[str, str]) -> str:
    parts = [f"message:\n{content}" if tools else content] if content else []
    for call in m.get("tool_calls") or ():
        fn = call.get("function") or {}
        names[call.get("id") or ""] = fn.get("name", "")
        parts.append(f"functions.{fn.get('name', '')}:\n{fn.get('arguments') or '{}'}")
    return "\n".join(parts)


def decision_grammar(tools: list[dict[str, Any]], *, text: bool = True) -> str:
    """GBNF for the first words of an answer: ``message:`` (unless ``text`` is False: a tool is
    required) or ``functions.<name>:``."""
    choices = [json.dumps(f"functions.{t['function']['name']}:") for t in tools]
    return "root ::= " + " | ".join(['"message:"'] * text + choices) + "\n"


def capped(max_tokens: int | None, cap: int) -> int:
    """The tokens a request may generate: what it asks for, never more than the server's cap."""
    return cap if not max_tokens or max_tokens <= 0 else min(max_tokens, cap)


class ChatHandler:
    """The chat completion handler llama_cpp calls (the keyword arguments of its built-in ones)."""

    def __init__(self, cap: int = DEFAULT_CAP):
        self.cap = cap

    def __call__(self, *, llama, messages, tools=None, tool_choice=None, functions=None, function_call=None,
                 stream: bool = False, stop=None, max_tokens=None, temperature: float = 0.2,
                 top_p: float = 0.95, top_k: int = 40, min_p: float = 0.05, repeat_penalty: float = 1.1,
                 **_: Any):
        if functions and not tools:
            tools = [{"type": "function", "function": f} for f in functions]
        if isinstance(function_call, dict) and tool_choice is None:
            tool_choice = {"type": "function", "function": {"name": function_call["name"]}}
        run = _Run(llama, stream, dict(temperature=temperature, top_p=top_p, top_k=top_k, min_p=min_p,
                                       repeat_penalty=repeat_penalty))
        limit = capped(max_tokens, self.cap)
        if not tools or tool_choice == "none":
            return run.answer(render_segments(messages), limit, stop)
        prompt = render_segments(messages, tools)
        if isinstance(tool_choice, dict):
            return run.call(prompt, _tool(tools, tool_choice["function"]["name"]))
        said = run.decide(prompt, tools, text=tool_choice != "required")
        if said.startswith("functions."):
            return run.call(prompt, _tool(tools, said[len("functions."):].rstrip(":")))
        return run.answer([*prompt, ("message:\n", False)], limit, stop)


def _tool(tools: list[dict[str, Any]], name: str) -> dict[str, Any]:
    for tool in tools:
        if tool["function"]["name"] == name:
            return tool
    raise ValueError(f"no tool named {name!r} among the tools offered")


class _Run:
    """One request's completions on the server's model."""

    def __init__(self, llama: Any, stream: bool, sampling: dict[str, Any]):
        self.llama, self.stream, self.sampling = llama, stream, sampling

    def decide(self, prompt: list[Segment], tools: list[dict[str, Any]], *, text: bool) -> str:
        """A few grammar-bound tokens, not streamed: answer in text or call which function."""
        from llama_cpp import llama_grammar

        grammar = llama_grammar.LlamaGrammar.from_string(decision_grammar(tools, text=text), verbose=False)
        first = self.llama.create_completion(prompt=tokenize(self.llama, prompt), temperature=0, max_tokens=16, stream=False,
                                             stop=[":"], grammar=grammar)
        return first["choices"][0]["text"]

    def answer(self, prompt: list[Segment], limit: int, stop: Any):
        from llama_cpp import llama_chat_format as fmt

        stops = [_END, *([stop] if isinstance(stop, str) else stop or [])]
        tokens = tokenize(self.llama, prompt)
        completion = self.llama.create_completion(prompt=tokens, stream=self.stream, max_tokens=limit,
                                                  stop=stops, **self.sampling)
        chat = fmt._convert_completion_to_chat(completion, stream=self.stream)
        return self._with_usage(cast(Iterator, chat), len(tokens)) if self.stream else chat

    def call(self, prompt: list[Segment], tool: dict[str, Any]):
        from llama_cpp import llama_chat_format as fmt
        from llama_cpp import llama_grammar

        name = tool["function"]["name"]
        try:
            grammar = llama_grammar.LlamaGrammar.from_json_schema(
                json.dumps(tool["function"].get("parameters") or {}), verbose=False)
        except Exception:  # a schema llama.cpp's converter cannot take: any JSON object then
            grammar = llama_grammar.LlamaGrammar.from_string(llama_grammar.JSON_GBNF, verbose=False)
        tokens = tokenize(self.llama, [*prompt, (f"functions.{name}:\n", False)])
        completion = self.llama.create_completion(
            prompt=tokens, stream=self.stream, max_tokens=ARGS_CAP, stop=[_END], grammar=grammar, **self.sampling)
        chat = fmt._convert_completion_to_chat_function(name, completion, self.stream)
        return self._with_usage(cast(Iterator, chat), len(tokens)) if self.stream else chat

    def _with_usage(self, chunks: Iterator[dict[str, Any]], prompt_tokens: int) -> Iterator[dict[str, Any]]:
        """The stream, then one chunk with the usage (llama-cpp-python's streams carry none)."""
        last: dict[str, Any] = {}
        written: list[str] = []
        for chunk in chunks:
            last = chunk
            for choice in chunk.get("choices") or ():
                delta = choice.get("delta") or {}
                written.append(delta.get("content") or "")
                written += [(c.get("function") or {}).get("arguments") or "" for c in delta.get("tool_calls") or ()]
            yield chunk
        if not last:
            return
        output_tokens = self._count("".join(written))
        yield {"id": last["id"], "object": "chat.completion.chunk", "created": last["created"],
               "model": last["model"], "choices": [],
               "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": output_tokens,
                         "total_tokens": prompt_tokens + output_tokens}}

    def _count(self, text: str) -> int:
        return len(self.llama.tokenize(text.encode("utf-8"), add_bos=False, special=True)) if text else 0


def main(argv: list[str] | None = None) -> None:
    """Run llama-cpp-python's server with this format registered: ``--token_cap N`` then its own flags."""
    args = list(sys.argv[1:] if argv is None else argv)
    cap = DEFAULT_CAP
    if "--token_cap" in args:
        at = args.index("--token_cap")
        cap = int(args[at + 1])
        del args[at:at + 2]
    from llama_cpp import llama_chat_format
    from llama_cpp.server.__main__ import main as serve

    llama_chat_format.LlamaChatCompletionHandlerRegistry().register_chat_completion_handler(
        FORMAT_NAME, ChatHandler(cap), overwrite=True)
    sys.argv = [sys.argv[0], *args]
    serve()


if __name__ == "__main__":
    main()
