"""The ``report`` stage: pure functions from result objects to text, and the table of formats.

Each result type declares the formats it can be shown in (:data:`DECLARED_FORMATS`); each
command offers exactly those as its ``--format`` choices. A renderer is registered for one
declared (type, format) pair, in a module per format or per result type; a test checks
that every declared pair has its renderer and its golden file. A new result type is one line
here plus its renderers.
"""

from __future__ import annotations

import enum
import importlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any


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

# The module of the renderers of the scan and the assessment, one per format.
_BY_FORMAT = {
    Format.TERMINAL: "terminal",
    Format.JSON: "json_format",
    Format.SARIF: "sarif",
    Format.MARKDOWN: "markdown",
    Format.HTML: "html",
}

# The formats of each result type, in the order its command lists them, and the module under
# gpuport.report that holds its renderers (None: the module of each format, _BY_FORMAT). Types
# are named, not imported, so that a command loads only its own stage and the one renderer
# module it writes with (`gpuport scan` need not import plan, port or bench).
_DECLARED: dict[str, tuple[tuple[Format, ...], str | None]] = {
    "gpuport.scan.engine.ScanResult": (EVERY_FORMAT, None),
    "gpuport.assess.verdict.Assessment": (EVERY_FORMAT, None),
    # SARIF: what still needs a person, at its place
    "gpuport.port.model.PortResult": (EVERY_FORMAT, "port_formats"),
    # A plan makes no findings; its SARIF is a valid log without results that carries the
    # plan in a note and the run's properties, so a CI job that uploads the SARIF of every
    # command keeps working (`gpuport plan --format sarif` has always given one).
    "gpuport.plan.planner.PlanResult": (EVERY_FORMAT, "plan_formats"),
    "gpuport.kb.query.KbLookup": ((Format.TERMINAL, Format.JSON), "kb_formats"),
    "gpuport.kb.query.KbTable": ((Format.TERMINAL, Format.JSON), "kb_formats"),
    "gpuport.kb.query.KbCounts": ((Format.TERMINAL, Format.JSON), "kb_formats"),
    "gpuport.rules.Rule": ((Format.TERMINAL, Format.MARKDOWN, Format.JSON), "rule_formats"),
    "gpuport.rules.RuleIndex": ((Format.TERMINAL, Format.MARKDOWN, Format.JSON), "rule_formats"),
    "gpuport.bench.results.RunReport": (
        (Format.TERMINAL, Format.JSON, Format.MARKDOWN),
        "bench_formats",
    ),
    "gpuport.bench.results.RunList": ((Format.TERMINAL, Format.JSON), "bench_formats"),
    "gpuport.bench.results.BenchComparison": (
        (Format.TERMINAL, Format.JSON, Format.MARKDOWN, Format.HTML),
        "bench_formats",
    ),
    "gpuport.verify.result.VerifyComparison": (
        (Format.TERMINAL, Format.JSON, Format.MARKDOWN, Format.HTML),
        "verify_formats",
    ),
    "gpuport.doctor.model.DoctorReport": ((Format.TERMINAL, Format.JSON), "doctor_formats"),
    "gpuport.serving.results.ServeBenchResult": (
        (Format.TERMINAL, Format.JSON, Format.MARKDOWN),
        "serve_formats",
    ),
    "gpuport.serving.results.ServeVerifyResult": (
        (Format.TERMINAL, Format.JSON, Format.MARKDOWN),
        "serve_formats",
    ),
}


def _name(result_type: type) -> str:
    return f"{result_type.__module__}.{result_type.__qualname__}"


def _import_type(name: str) -> type:
    module, _, qualname = name.rpartition(".")
    found = getattr(importlib.import_module(module), qualname)
    assert isinstance(found, type)
    return found


class _DeclaredFormats(Mapping[type, tuple[Format, ...]]):
    """Result type -> its formats; the types are imported only when the table is listed."""

    def __getitem__(self, result_type: type) -> tuple[Format, ...]:
        if isinstance(result_type, type):
            entry = _DECLARED.get(_name(result_type))
            if entry is not None:
                return entry[0]
        raise KeyError(result_type)

    def __iter__(self) -> Iterator[type]:
        return (_import_type(name) for name in _DECLARED)

    def __len__(self) -> int:
        return len(_DECLARED)


# The formats of each result type, in the order its command lists them.
DECLARED_FORMATS: Mapping[type, tuple[Format, ...]] = _DeclaredFormats()

Renderer = Callable[[Any, RenderOptions], str]
_RENDERERS: dict[tuple[type, Format], Renderer] = {}
# Renderers of reports too big to hold whole (a scan's JSON and SARIF): text in pieces.
ChunkRenderer = Callable[[Any, RenderOptions], Iterable[str]]
_CHUNK_RENDERERS: dict[tuple[type, Format], ChunkRenderer] = {}
# The module each registered renderer was defined in.
_ORIGINS: dict[tuple[type, Format], str] = {}


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
        _ORIGINS.setdefault((result_type, fmt), function.__module__)
        return function

    return register


def chunk_renderer(result_type: type, fmt: Format) -> Callable[[ChunkRenderer], ChunkRenderer]:
    """Register a renderer that gives its text in pieces; :func:`render` joins them."""

    def register(function: ChunkRenderer) -> ChunkRenderer:
        _CHUNK_RENDERERS[(result_type, fmt)] = function
        _ORIGINS[(result_type, fmt)] = function.__module__
        renderer(result_type, fmt)(lambda result, options: "".join(function(result, options)))
        return function

    return register


def renderer_module(result_type: type, fmt: Format) -> str:
    """The module (under gpuport.report) that registers the renderer of a declared pair."""
    entry = _DECLARED.get(_name(result_type))
    if entry is None or fmt not in entry[0]:
        raise LookupError(f"{result_type.__name__} does not declare the {fmt.value} format")
    return f"{__name__}.{entry[1] or _BY_FORMAT[fmt]}"


def _load(result_type: type, fmt: Format) -> None:
    """Import the renderer modules (they register themselves) that can render a
    ``result_type`` object in ``fmt``: those of its declared classes, only when it renders."""
    for cls in result_type.__mro__:
        entry = _DECLARED.get(_name(cls))
        if entry is not None and fmt in entry[0]:
            importlib.import_module(renderer_module(cls, fmt))


def _load_all() -> None:
    for name, (formats, _) in _DECLARED.items():
        result_type = _import_type(name)
        for fmt in formats:
            importlib.import_module(renderer_module(result_type, fmt))


def render(result: object, fmt: Format, options: RenderOptions = RenderOptions()) -> str:
    """Render ``result`` in ``fmt``; raises ``LookupError`` when that pair has no renderer."""
    _load(type(result), fmt)
    for cls in type(result).__mro__:
        function = _RENDERERS.get((cls, fmt))
        if function is not None:
            return function(result, options)
    raise LookupError(f"no {fmt.value} renderer for {type(result).__name__}")


def render_chunks(
    result: object, fmt: Format, options: RenderOptions = RenderOptions()
) -> Iterable[str]:
    """:func:`render`'s text in pieces, so a big report need not be held whole to be written."""
    _load(type(result), fmt)
    for cls in type(result).__mro__:
        function = _CHUNK_RENDERERS.get((cls, fmt))
        if function is not None:
            return function(result, options)
    return (render(result, fmt, options),)


def registered() -> dict[tuple[type, Format], Renderer]:
    """Every (result type, format) pair with a renderer."""
    _load_all()
    return dict(_RENDERERS)


def origins() -> dict[tuple[type, Format], str]:
    """The module that defined each registered renderer (to check :func:`renderer_module`)."""
    _load_all()
    return dict(_ORIGINS)
