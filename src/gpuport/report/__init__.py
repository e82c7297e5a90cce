"""The ``report`` stage: pure functions from result objects to text, and the table of formats.

Each result type declares the formats it can be shown in (:data:`DECLARED_FORMATS`); each
command offers exactly those as its ``--format`` choices. A renderer is registered for one
declared (type, format) pair, in a module per format or per result type; a test checks
that every declared pair has its renderer and its golden file. A new result type is one line
here plus its renderers.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from gpuport.assess.verdict import Assessment
from gpuport.bench.results import BenchComparison, RunList, RunReport
from gpuport.doctor.model import DoctorReport
from gpuport.kb.query import KbCounts, KbLookup, KbTable
from gpuport.plan.planner import PlanResult
from gpuport.port.model import PortResult
from gpuport.rules import Rule, RuleIndex
from gpuport.scan.engine import ScanResult
from gpuport.serving.results import ServeBenchResult, ServeVerifyResult
from gpuport.verify.result import VerifyComparison


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
    # Markdown: file links start with this URL (`scan --link-base`), else they are relative
    link_base: str = ""


EVERY_FORMAT: tuple[Format, ...] = tuple(Format)

# The formats of each result type, in the order its command lists them.
DECLARED_FORMATS: Mapping[type, tuple[Format, ...]] = MappingProxyType(
    {
        ScanResult: EVERY_FORMAT,
        Assessment: EVERY_FORMAT,
        PortResult: EVERY_FORMAT,  # SARIF: what still needs a person, at its place
        # A plan makes no findings; its SARIF is a valid log without results that carries the
        # plan in a note and the run's properties, so a CI job that uploads the SARIF of every
        # command keeps working (`gpuport plan --format sarif` has always given one).
        PlanResult: EVERY_FORMAT,
        KbLookup: (Format.TERMINAL, Format.JSON),
        KbTable: (Format.TERMINAL, Format.JSON),
        KbCounts: (Format.TERMINAL, Format.JSON),
        Rule: (Format.TERMINAL, Format.MARKDOWN, Format.JSON),
        RuleIndex: (Format.TERMINAL, Format.MARKDOWN, Format.JSON),
        RunReport: (Format.TERMINAL, Format.JSON, Format.MARKDOWN),
        RunList: (Format.TERMINAL, Format.JSON),
        BenchComparison: (Format.TERMINAL, Format.JSON, Format.MARKDOWN, Format.HTML),
        VerifyComparison: (Format.TERMINAL, Format.JSON, Format.MARKDOWN, Format.HTML),
        DoctorReport: (Format.TERMINAL, Format.JSON),
        ServeBenchResult: (Format.TERMINAL, Format.JSON, Format.MARKDOWN),
        ServeVerifyResult: (Format.TERMINAL, Format.JSON, Format.MARKDOWN),
    }
)

Renderer = Callable[[Any, RenderOptions], str]
_RENDERERS: dict[tuple[type, Format], Renderer] = {}
# Renderers of reports too big to hold whole (a scan's JSON and SARIF): text in pieces.
ChunkRenderer = Callable[[Any, RenderOptions], Iterable[str]]
_CHUNK_RENDERERS: dict[tuple[type, Format], ChunkRenderer] = {}


def formats_for(result_type: type) -> tuple[Format, ...]:
    """The formats ``result_type`` declares; ``LookupError`` for a type that declares none."""
    try:
        return DECLARED_FORMATS[result_type]
    except KeyError:
        raise LookupError(f"{result_type.__name__} declares no output formats") from None


def renderer(result_type: type, fmt: Format) -> Callable[[Renderer], Renderer]:
    """Register the renderer of ``result_type`` objects in ``fmt``, a format the type declares."""
    if fmt not in formats_for(result_type):
        raise LookupError(f"{result_type.__name__} does not declare the {fmt.value} format")

    def register(function: Renderer) -> Renderer:
        _RENDERERS[(result_type, fmt)] = function
        return function

    return register


def chunk_renderer(result_type: type, fmt: Format) -> Callable[[ChunkRenderer], ChunkRenderer]:
    """Register a renderer that gives its text in pieces; :func:`render` joins them."""

    def register(function: ChunkRenderer) -> ChunkRenderer:
        _CHUNK_RENDERERS[(result_type, fmt)] = function
        renderer(result_type, fmt)(lambda result, options: "".join(function(result, options)))
        return function

    return register


def _load() -> None:
    """Import the renderer modules (they register themselves), only when something renders."""
    from gpuport.report import (  # noqa: F401
        bench_formats,
        doctor_formats,
        html,
        json_format,
        kb_formats,
        markdown,
        plan_formats,
        port_formats,
        rule_formats,
        sarif,
        serve_formats,
        terminal,
        verify_formats,
    )


def render(result: object, fmt: Format, options: RenderOptions = RenderOptions()) -> str:
    """Render ``result`` in ``fmt``; raises ``LookupError`` when that pair has no renderer."""
    _load()
    for cls in type(result).__mro__:
        function = _RENDERERS.get((cls, fmt))
        if function is not None:
            return function(result, options)
    raise LookupError(f"no {fmt.value} renderer for {type(result).__name__}")


def render_chunks(
    result: object, fmt: Format, options: RenderOptions = RenderOptions()
) -> Iterable[str]:
    """:func:`render`'s text in pieces, so a big report need not be held whole to be written."""
    _load()
    for cls in type(result).__mro__:
        function = _CHUNK_RENDERERS.get((cls, fmt))
        if function is not None:
            return function(result, options)
    return (render(result, fmt, options),)


def registered() -> dict[tuple[type, Format], Renderer]:
    """Every (result type, format) pair with a renderer."""
    _load()
    return dict(_RENDERERS)
