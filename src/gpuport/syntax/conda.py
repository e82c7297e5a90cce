"""Conda environment files: channels, conda package specs and the ``pip:`` subsection.

Read with PyYAML's composer, whose nodes carry line and column marks; the ``pip:`` items are
pip requirement lines (``syntax/requirements.py``). :class:`CondaLayout` records where the
lists sit so that the port can add a ``pip:`` section in the file's own indentation.
"""

from __future__ import annotations

import posixpath
import re

import yaml

from gpuport.findings import SkipKind, Skipped
from gpuport.syntax.dependencies import (
    CondaLayout,
    CondaPackage,
    DependencyFile,
    FileFormat,
    IndexRole,
    IndexSource,
    Reader,
)
from gpuport.syntax.requirements import LogicalLine, parse_logical_line

_CONDA_SPEC_RE = re.compile(
    r"^(?:(?P<channel>[A-Za-z0-9_./:-]+?)::)?(?P<name>[A-Za-z0-9_][A-Za-z0-9_.-]*)(?P<rest>.*)$"
)


def parse_conda_spec(text: str) -> tuple[str, str, str, str] | None:
    """``nvidia::cuda-toolkit=12.1=h1`` -> (channel, name, spec, build); None if not a spec."""
    match = _CONDA_SPEC_RE.match(text.strip())
    if not match:
        return None
    rest = match.group("rest").strip()
    build = ""
    bracket = re.search(r"\[([^\]]*)\]", rest)
    if bracket:
        b = re.search(r"""build\s*=\s*['"]?([^'",\]]+)""", bracket.group(1))
        build = b.group(1) if b else ""
    else:
        pieces = re.split(r"[=\s]+", rest.lstrip("=").strip()) if rest else []
        # `name=version=build` or `name version build`
        if len(pieces) >= 2 and (rest.count("=") >= 2 or " " in rest.strip()):
            build = pieces[-1]
    return match.group("channel") or "", match.group("name").lower(), rest, build


def parse_conda_env(text: str, path: str, *, read: Reader | None = None) -> DependencyFile:
    """A conda environment file: channels, conda packages and the ``pip:`` subsection."""
    result = DependencyFile(path, FileFormat.YAML, text)
    try:
        documents = list(yaml.compose_all(text, Loader=yaml.SafeLoader))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        line = mark.line + 1 if mark is not None else 0
        message = " ".join(str(getattr(exc, "problem", "") or exc).split())
        result.problems.append(
            Skipped(path, SkipKind.MALFORMED, f"YAML does not parse: {message}", line)
        )
        return result
    root = documents[0] if documents else None
    if not isinstance(root, yaml.MappingNode):
        return result
    for key_node, value_node in root.value:
        key = key_node.value if isinstance(key_node, yaml.ScalarNode) else ""
        if key == "channels" and isinstance(value_node, yaml.SequenceNode):
            for item in value_node.value:
                if isinstance(item, yaml.ScalarNode) and item.value:
                    result.indexes.append(
                        IndexSource(
                            str(item.value),
                            IndexRole.CHANNEL,
                            path,
                            item.start_mark.line + 1,
                            item.start_mark.column + 1,
                            "channels",
                        )
                    )
        elif key == "dependencies" and isinstance(value_node, yaml.SequenceNode):
            pip_line = pip_last = pip_column = 0
            for item in value_node.value:
                if isinstance(item, yaml.ScalarNode):
                    _conda_item(item, path, result)
                elif isinstance(item, yaml.MappingNode):
                    for sub_key, sub_value in item.value:
                        if (
                            isinstance(sub_key, yaml.ScalarNode)
                            and sub_key.value == "pip"
                            and isinstance(sub_value, yaml.SequenceNode)
                        ):
                            _conda_pip(sub_value, path, result, read)
                            pip_line = sub_key.start_mark.line + 1
                            if sub_value.value:
                                pip_last = _last_line(sub_value.value[-1])
                                pip_column = _dash_column(text, sub_value.value[0])
            items = value_node.value
            result.conda_layout = CondaLayout(
                dependencies_line=key_node.start_mark.line + 1,
                last_item_line=_last_line(items[-1]) if items else 0,
                item_column=_dash_column(text, items[0]) if items else 0,
                pip_line=pip_line,
                pip_last_line=pip_last,
                pip_item_column=pip_column,
            )
    return result


def _last_line(node: yaml.Node) -> int:
    """1-based last line a node's text covers.

    A block collection's end mark sits at the next token (maybe after comments), so the last
    scalar inside it decides.
    """
    if isinstance(node, yaml.SequenceNode) and node.value:
        return _last_line(node.value[-1])
    if isinstance(node, yaml.MappingNode) and node.value:
        return _last_line(node.value[-1][1])
    end = node.end_mark
    return end.line + 1 if end.column > 0 else end.line


def _dash_column(text: str, node: yaml.Node) -> int:
    """1-based column of the ``-`` that starts a block sequence item."""
    line = text.splitlines()[node.start_mark.line]
    before = line[: node.start_mark.column]
    dash = before.rfind("-")
    return dash + 1 if dash >= 0 else node.start_mark.column + 1


def _conda_item(node: yaml.ScalarNode, path: str, result: DependencyFile) -> None:
    text = str(node.value)
    parsed = parse_conda_spec(text)
    line, column = node.start_mark.line + 1, node.start_mark.column + 1
    if parsed is None:
        result.problems.append(
            Skipped(
                path,
                SkipKind.MALFORMED,
                f"{text!r} is not a conda package spec",
                line,
                True,
            )
        )
        return
    channel, name, spec, build = parsed
    result.conda_packages.append(CondaPackage(name, spec, channel, build, text, path, line, column))


def _conda_pip(
    node: yaml.SequenceNode, path: str, result: DependencyFile, read: Reader | None
) -> None:
    for item in node.value:
        if not isinstance(item, yaml.ScalarNode):
            continue
        line = item.start_mark.line + 1
        logical = LogicalLine(str(item.value).strip(), line, line, item.start_mark.column + 1)
        if not logical.text or logical.text.startswith("#"):
            continue
        parse_logical_line(logical, result, read, "conda.pip", (posixpath.normpath(path),))
