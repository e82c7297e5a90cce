"""The ``report`` stage: pure functions from result objects to text, one module per format.

Every result type (scan, assessment, port, plan) registers one renderer per format; a test
checks that the table is complete, so no command ever lacks a format.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar


class Format(enum.StrEnum):
    TERMINAL = "terminal"
    JSON = "json"
    SARIF = "sarif"
    MARKDOWN = "markdown"
    HTML = "html"


@dataclass(frozen=True, slots=True)
class RenderOptions:
    color: bool = False  # ANSI colour, terminal format only
    width: int = 100  # terminal width
    tool_version: str = ""


T = TypeVar("T")
Renderer = Callable[[Any, RenderOptions], str]
_RENDERERS: dict[tuple[type, Format], Renderer] = {}


def renderer(result_type: type, fmt: Format) -> Callable[[Renderer], Renderer]:
    """Register the renderer of ``result_type`` objects in ``fmt``."""

    def register(function: Renderer) -> Renderer:
        _RENDERERS[(result_type, fmt)] = function
        return function

    return register


def _load() -> None:
    """Import the renderer modules (they register themselves), only when something renders."""
    from gpuport.report import (  # noqa: F401
        html,
        json_format,
        kb_formats,
        markdown,
        plan_formats,
        port_formats,
        rule_formats,
        sarif,
        terminal,
    )


def render(result: object, fmt: Format, options: RenderOptions = RenderOptions()) -> str:
    """Render ``result`` in ``fmt``; raises ``LookupError`` when that pair has no renderer."""
    _load()
    for cls in type(result).__mro__:
        function = _RENDERERS.get((cls, fmt))
        if function is not None:
            return function(result, options)
    raise LookupError(f"no {fmt.value} renderer for {type(result).__name__}")


def registered() -> dict[tuple[type, Format], Renderer]:
    _load()
    return dict(_RENDERERS)
