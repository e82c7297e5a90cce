"""YAML documents as nodes that keep their character offsets, composed by PyYAML (libyaml).

Composing (not loading) keeps every node's start and end marks, so a finding lands on the right
line and ``gpuport port`` edits the YAML as text instead of re-dumping it. ruamel.yaml was
measured against it (``benchmarks/syntax_readers.py``; results in
``benchmarks/results/syntax_readers.md``): both give the same marks and styles for all 405 nodes
of the fixtures, and libyaml is the fastest, 0.33 s for 400 KB against 2.0 s for PyYAML's
pure-Python parser and 2.8 to 2.9 s for ruamel.yaml (pure, round-trip), so PyYAML stays.
"""

from __future__ import annotations

from dataclasses import dataclass

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

__all__ = [
    "MappingNode",
    "Node",
    "ScalarNode",
    "SequenceNode",
    "YamlProblem",
    "compose_documents",
    "last_line",
    "mapping_get",
    "scalar_is",
    "scalar_span",
]

# libyaml's loader is many times faster; its marks count characters like PyYAML's own.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True, slots=True)
class YamlProblem:
    """Why a YAML text could not be composed, and the 1-based line (0: unknown)."""

    line: int
    reason: str


def compose_documents(text: str) -> tuple[list[Node | None], YamlProblem | None]:
    """The documents of a YAML stream as nodes; none and the problem when it does not parse."""
    try:
        return list(yaml.compose_all(text, Loader=_LOADER)), None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        line = mark.line + 1 if mark is not None else 0
        position = getattr(exc, "position", None)  # a ReaderError: an unusable character
        if mark is None and isinstance(position, int):
            line = text.count("\n", 0, position) + 1
        problem = str(getattr(exc, "problem", "") or exc).strip()
        if "{{" in text:
            template_line = text.count("\n", 0, text.index("{{")) + 1
            problem += f" (the file looks like a Helm/Go template: '{{{{' on line {template_line})"
        return [], YamlProblem(line, problem)
    except (ValueError, RecursionError) as exc:  # e.g. PyYAML's reader on odd characters
        return [], YamlProblem(0, str(exc))


def scalar_span(node: ScalarNode) -> tuple[int, int]:
    """The span of a scalar's content in the text (inside quotes, when it is quoted)."""
    start, end = node.start_mark.index, node.end_mark.index
    if node.style in ("'", '"'):
        return start + 1, end - 1
    return start, end


def last_line(node: Node) -> int:
    """The 0-based last line holding content of ``node``."""
    if isinstance(node, ScalarNode):
        line: int = node.end_mark.line
        if node.end_mark.column == 0 and line > node.start_mark.line:
            line -= 1
        return line
    if isinstance(node, MappingNode):
        lines = [last_line(v) for pair in node.value for v in pair]
    elif isinstance(node, SequenceNode):
        lines = [last_line(v) for v in node.value]
    else:
        lines = []
    start: int = node.start_mark.line
    return max([start, *lines])


def mapping_get(node: Node, name: str) -> tuple[ScalarNode, Node] | None:
    """The key and value nodes of ``name`` in a mapping node (None: not a mapping, or absent)."""
    if not isinstance(node, MappingNode):
        return None
    for key, value in node.value:
        if isinstance(key, ScalarNode) and key.value == name:
            return key, value
    return None


def scalar_is(node: Node, wanted: str) -> bool:
    """``node`` is a scalar whose value, stripped, is ``wanted``."""
    return isinstance(node, ScalarNode) and str(node.value).strip() == wanted
