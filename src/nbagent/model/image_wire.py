"""Images on the wire, in the form each API documents.

- Chat Completions (OpenAI, and the OpenAI-compatible servers of Ollama, vLLM and llama.cpp): a tool
  message's content is text only, so the images of a step's tool results go in one user message right
  after the last of those results: a text part naming each image (its caption), then the image as an
  ``image_url`` part holding a base64 data URL. A user message's own images (attachments) go in its
  content the same way. Ollama reads base64 data URLs only, llama.cpp's server only with a
  multimodal projector loaded (``--mmproj``); both take this one form, as vLLM does.
- Responses: a ``function_call_output``'s ``output`` may be a list of ``input_text`` and
  ``input_image`` parts, so the images stay with the call that showed them; a user message's content
  is a list of the same parts.

What is sent is the neutral message's ``images`` (nbagent.images.image): which ones a request
carries is decided before (nbagent.images.window), never here.
"""

from __future__ import annotations

from typing import Any

from ..images.image import Image, images_of

TOOL_IMAGES_INTRO = "The images the tool results above show, in order:"


def _images(message: dict[str, Any]) -> list[Image]:
    return [Image.from_dict(d) for d in images_of(message)]


# ----- Chat Completions ---------------------------------------------------------------------------

def chat_image_parts(images: list[Image]) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for image in images:
        parts.append({"type": "text", "text": image.label()})
        parts.append({"type": "image_url", "image_url": {"url": image.data_url()}})
    return parts


def chat_user_content(message: dict[str, Any]) -> str | list[dict[str, Any]]:
    """A user message's content: its text, or its text and its images as parts."""
    text = message.get("content") or ""
    images = _images(message)
    if not images:
        return text
    return [{"type": "text", "text": text}, *chat_image_parts(images)] if text else chat_image_parts(images)


def with_tool_images(neutral: list[dict[str, Any]], wire: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``wire`` (Chat messages, one per ``neutral`` message, in order) with a user message of images
    after each run of tool results that showed some."""
    if not any(m.get("role") == "tool" and images_of(m) for m in neutral):
        return wire
    out: list[dict[str, Any]] = []
    pending: list[Image] = []
    for m, w in zip(neutral, wire):
        if m.get("role") != "tool" and pending:
            out.append(_tool_images_message(pending))
            pending = []
        out.append(w)
        if m.get("role") == "tool":
            pending += _images(m)
    if pending:
        out.append(_tool_images_message(pending))
    return out


def _tool_images_message(images: list[Image]) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": TOOL_IMAGES_INTRO}, *chat_image_parts(images)]}


# ----- Responses ----------------------------------------------------------------------------------

def responses_image_parts(images: list[Image]) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for image in images:
        parts.append({"type": "input_text", "text": image.label()})
        parts.append({"type": "input_image", "image_url": image.data_url(), "detail": "auto"})
    return parts


def responses_tool_output(message: dict[str, Any]) -> str | list[dict[str, Any]]:
    """A function_call_output's ``output``: the text, or the text and the images as parts."""
    text = message.get("content") or ""
    images = _images(message)
    if not images:
        return text
    return [{"type": "input_text", "text": text}, *responses_image_parts(images)]


def responses_user_content(message: dict[str, Any]) -> str | list[dict[str, Any]]:
    text = message.get("content") or ""
    images = _images(message)
    if not images:
        return text
    head = [{"type": "input_text", "text": text}] if text else []
    return [*head, *responses_image_parts(images)]
