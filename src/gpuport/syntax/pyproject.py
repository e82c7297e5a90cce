"""pyproject.toml dependencies: PEP 621, PEP 735 groups, build-system, Poetry, uv and PDM.

Values come from ``tomllib``; the line (and, for strings, the column) of each requirement and
index from :class:`~gpuport.syntax.toml.TomlLocator`. Poetry's and Pipenv's ``name = spec``
tables are read by :func:`table_requirement`, shared with ``syntax/pipfile.py``, and Poetry's
own version syntax (``^0.43``, ``~1.2``) is translated to PEP 440 by :func:`poetry_specifier`.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from gpuport.findings import Skipped
from gpuport.syntax.dependencies import (
    DependencyFile,
    FileFormat,
    Form,
    IndexRole,
    IndexSource,
    Requirement,
    string_requirement,
    with_index,
)
from gpuport.syntax.pep508 import local_label, name_from_url, normalize
from gpuport.syntax.toml import TomlLocator, load_document

if TYPE_CHECKING:  # packaging (about 40 ms) is imported where a version is read
    from packaging.specifiers import SpecifierSet

# ---------------------------------------------------------------------------------------------
# TOML records shared with the Pipfile reader


def toml_strings(
    locator: TomlLocator,
    path: str,
    key_path: tuple[str, ...],
    values: list[Any],
    section: str,
    result: DependencyFile,
    sources: dict[str, str] | None = None,
) -> None:
    """Requirement records for an array of PEP 508 strings at ``key_path``."""
    anchor = locator.key_offset(key_path)
    cursor = anchor if anchor is not None else 0
    fallback_line = locator.line_of(anchor) if anchor is not None else 1
    for value in values:
        if not isinstance(value, str):
            continue  # {include-group = "..."} and other tables
        found = locator.string_after(value, cursor)
        if found is not None:
            line = locator.line_of(found)
            column = found - locator.line_starts[line - 1] + 1
            cursor = found + len(value) + 2
        else:
            line, column = fallback_line, 0
        requirement = string_requirement(value, result, line, column, section)
        if requirement is None:
            continue
        if sources and requirement.key in sources:
            requirement = with_index(requirement, sources[requirement.key])
        result.requirements.append(requirement)


def table_requirement(
    locator: TomlLocator,
    path: str,
    header: tuple[str, ...],
    name: str,
    value: Any,
    section: str,
) -> Requirement | None:
    """A Poetry/Pipfile ``name = "spec"`` / ``name = {version=..., ...}`` entry."""
    offset = locator.key_offset((*header, name))
    line = locator.line_of(offset) if offset is not None else locator.header_line(header)
    column = 1
    if offset is not None:
        line_start = locator.line_starts[line - 1]
        text = locator.text[line_start:offset]
        column = len(text) - len(text.lstrip()) + 1
    specifier = ""
    extras: tuple[str, ...] = ()
    marker = ""
    url = ""
    index = ""
    if isinstance(value, str):
        specifier = value
    elif isinstance(value, list):
        # Poetry's multiple-constraint form: [{version=..., markers=...}, ...]; the first counts.
        first = next((v for v in value if isinstance(v, dict)), {})
        value = first
    if isinstance(value, dict):
        specifier = str(value.get("version", ""))
        raw_extras = value.get("extras", [])
        if isinstance(raw_extras, list):
            extras = tuple(str(e) for e in raw_extras)
        marker = str(value.get("markers", value.get("marker", "")))
        for url_key in ("url", "git", "path", "file"):
            if isinstance(value.get(url_key), str):
                url = str(value[url_key])
                break
        index = str(value.get("source", value.get("index", "")))
    if specifier == "*":
        specifier = ""
    local = local_label(specifier)
    if url and not local:
        local = name_from_url(url)[1]
    return Requirement(
        name=name,
        key=normalize(name),
        extras=extras,
        specifier=specifier,
        marker=marker,
        url=url,
        path=path,
        line=line,
        end_line=line,
        column=column,
        section=section,
        form=Form.TABLE,
        index=index,
        local_version=local,
    )


def table(data: Any, *keys: str) -> dict[str, Any]:
    for key in keys:
        if not isinstance(data, dict):
            return {}
        data = data.get(key, {})
    return data if isinstance(data, dict) else {}


# ---------------------------------------------------------------------------------------------
# pyproject.toml


def toml_dependency_file(text: str, path: str) -> tuple[DependencyFile, dict[str, Any] | None]:
    """An empty TOML dependency file and its parsed document; None when the text does not parse
    (the file then holds the problem)."""
    result = DependencyFile(path, FileFormat.TOML, text)
    data = load_document(text, path)
    if isinstance(data, Skipped):
        result.problems.append(data)
        return result, None
    return result, data


def parse_pyproject(text: str, path: str) -> DependencyFile:
    """PEP 621 / PEP 735 / build-system, Poetry, uv and PDM dependencies and indexes."""
    result, data = toml_dependency_file(text, path)
    if data is None:
        return result
    locator = TomlLocator(text)
    uv_sources = _uv_sources(table(data, "tool", "uv", "sources"))
    project = table(data, "project")
    if isinstance(name := project.get("name"), str):
        result.project_name = name
    # Each array of PEP 508 strings (its key path names its section), and whether
    # [tool.uv.sources] applies to it, in file-reading order.
    arrays: list[tuple[tuple[str, ...], object, bool]] = [
        (("project", "dependencies"), project.get("dependencies"), True),
        *(
            (("project", "optional-dependencies", extra), values, True)
            for extra, values in table(project, "optional-dependencies").items()
        ),
        *(
            (("dependency-groups", group), values, True)
            for group, values in table(data, "dependency-groups").items()
        ),
        (("build-system", "requires"), table(data, "build-system").get("requires"), False),
    ]
    for key_path, values, uv in arrays:
        if isinstance(values, list):
            sources = uv_sources if uv else None
            toml_strings(locator, path, key_path, values, ".".join(key_path), result, sources)
    _parse_poetry(data, locator, path, result)
    _parse_uv_indexes(data, locator, path, result)
    _parse_pdm(data, locator, path, result)
    return result


def _uv_sources(table: dict[str, Any]) -> dict[str, str]:
    """Normalized package name -> uv index name, from [tool.uv.sources]."""
    sources: dict[str, str] = {}
    for name, value in table.items():
        entries = value if isinstance(value, list) else [value]
        for entry in entries:
            if isinstance(entry, dict) and isinstance(entry.get("index"), str):
                sources[normalize(name)] = entry["index"]
                break
    return sources


def _parse_poetry(
    data: dict[str, Any], locator: TomlLocator, path: str, result: DependencyFile
) -> None:
    poetry = table(data, "tool", "poetry")
    if not poetry:
        return
    tables: list[tuple[tuple[str, ...], str]] = [
        (("tool", "poetry", "dependencies"), "tool.poetry.dependencies"),
        (("tool", "poetry", "dev-dependencies"), "tool.poetry.dev-dependencies"),
    ]
    for group in table(poetry, "group"):
        tables.append(
            (("tool", "poetry", "group", group, "dependencies"), f"tool.poetry.group.{group}")
        )
    for header, section in tables:
        for name, value in table(data, *header).items():
            if name.lower() == "python":
                continue
            requirement = table_requirement(locator, path, header, name, value, section)
            if requirement is not None:
                result.requirements.append(requirement)
    result.indexes.extend(
        toml_indexes(data, locator, path, ("tool", "poetry", "source"), _poetry_role)
    )


def toml_index(
    locator: TomlLocator,
    path: str,
    header: tuple[str, ...],
    occurrence: int,
    source: dict[str, Any],
    role: IndexRole,
    key: str = "url",
) -> IndexSource:
    offset = locator.key_offset((*header, key), occurrence)
    line = (
        locator.line_of(offset) if offset is not None else locator.header_line(header, occurrence)
    )
    return IndexSource(str(source[key]), role, path, line, 0, key, str(source.get("name", "")))


def toml_indexes(
    data: dict[str, Any],
    locator: TomlLocator,
    path: str,
    header: tuple[str, ...],
    role_of: Callable[[int, dict[str, Any]], IndexRole],
) -> Iterator[IndexSource]:
    """The tables of the array ``header`` (``[[tool.uv.index]]``...) that give a ``url``,
    each with the role ``role_of(occurrence, table)`` gives it."""
    raw = table(data, *header[:-1]).get(header[-1], [])
    for occurrence, source in enumerate(raw if isinstance(raw, list) else []):
        if isinstance(source, dict) and isinstance(source.get("url"), str):
            role = role_of(occurrence, source)
            yield toml_index(locator, path, header, occurrence, source, role)


def _poetry_role(_occurrence: int, source: dict[str, Any]) -> IndexRole:
    # https://python-poetry.org/docs/repositories/#project-configuration
    priority = str(source.get("priority", "")).lower()
    if source.get("default") is True:
        priority = "primary"
    elif source.get("secondary") is True:
        priority = "supplemental"
    return {
        "explicit": IndexRole.NAMED,
        "supplemental": IndexRole.EXTRA,
        "secondary": IndexRole.EXTRA,
    }.get(priority, IndexRole.PRIMARY)


def _uv_role(_occurrence: int, index: dict[str, Any]) -> IndexRole:
    # https://docs.astral.sh/uv/concepts/indexes/ : explicit indexes serve only the
    # packages pinned to them; others are searched before PyPI, first match wins.
    return IndexRole.NAMED if index.get("explicit") is True else IndexRole.PRIMARY


def _pdm_role(_occurrence: int, source: dict[str, Any]) -> IndexRole:
    # https://pdm-project.org/latest/usage/config/#configure-the-package-indexes :
    # a source named "pypi" replaces PyPI; the others are searched beside it.
    if source.get("type") == "find_links":
        return IndexRole.FIND_LINKS
    return IndexRole.PRIMARY if source.get("name") == "pypi" else IndexRole.EXTRA


def _parse_uv_indexes(
    data: dict[str, Any], locator: TomlLocator, path: str, result: DependencyFile
) -> None:
    uv = table(data, "tool", "uv")
    result.indexes.extend(toml_indexes(data, locator, path, ("tool", "uv", "index"), _uv_role))
    # The older spellings: [tool.uv] index-url / extra-index-url / find-links.
    for key, role in (
        ("index-url", IndexRole.PRIMARY),
        ("extra-index-url", IndexRole.EXTRA),
        ("find-links", IndexRole.FIND_LINKS),
    ):
        value = uv.get(key)
        urls = value if isinstance(value, list) else [value] if isinstance(value, str) else []
        offset = locator.key_offset(("tool", "uv", key))
        cursor = offset or 0
        for url in urls:
            if not isinstance(url, str):
                continue
            found = locator.string_after(url, cursor)
            line = locator.line_of(found if found is not None else cursor)
            if found is not None:
                cursor = found + len(url)
            result.indexes.append(IndexSource(url, role, path, line, 0, key))


def _parse_pdm(
    data: dict[str, Any], locator: TomlLocator, path: str, result: DependencyFile
) -> None:
    pdm = table(data, "tool", "pdm")
    result.indexes.extend(toml_indexes(data, locator, path, ("tool", "pdm", "source"), _pdm_role))
    for group, values in table(pdm, "dev-dependencies").items():
        if isinstance(values, list):
            toml_strings(
                locator,
                path,
                ("tool", "pdm", "dev-dependencies", group),
                values,
                f"tool.pdm.dev-dependencies.{group}",
                result,
            )
    raw_sources = pdm.get("source", [])
    for source in raw_sources if isinstance(raw_sources, list) else []:
        if isinstance(source, dict):
            _tie_pdm_packages(source, result)


def _tie_pdm_packages(source: dict[str, Any], result: DependencyFile) -> None:
    """Tie the requirements a source's ``include_packages`` names to that source.

    https://pdm-project.org/latest/usage/config/#specify-index-for-individual-packages :
    packages matching ``include_packages`` are searched in that source only.
    """
    patterns = source.get("include_packages")
    name = source.get("name")
    if not isinstance(patterns, list) or not isinstance(name, str):
        return
    globs = [normalize(p) if "*" not in p else p.lower() for p in patterns if isinstance(p, str)]
    result.requirements[:] = [
        with_index(r, name)
        if not r.index and any(fnmatch.fnmatchcase(r.key, g) for g in globs)
        else r
        for r in result.requirements
    ]


# ---------------------------------------------------------------------------------------------
# Version constraints, by the syntax they are written in


def allowed_versions(requirement: Requirement) -> SpecifierSet | None:
    """The versions a requirement's constraint allows, as PEP 440; None when unreadable.

    PEP 508 strings and Pipfile tables are PEP 440 already; Poetry tables use Poetry's own
    syntax (``^0.43``, ``~0.43.3``, a bare ``0.43.3``), translated by :func:`poetry_specifier`.
    """
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    text = requirement.specifier.strip()
    if requirement.form is Form.TABLE and requirement.section.startswith("tool.poetry"):
        return poetry_specifier(text)
    try:
        return SpecifierSet(text)
    except InvalidSpecifier:
        return None


# https://python-poetry.org/docs/dependency-specification/#version-constraints
_POETRY_OPERATOR_RE = re.compile(r"^(===|==|!=|~=|>=|<=|>|<)\s*(.+)$")
_POETRY_RELEASE_RE = re.compile(r"^\d+(?:\.\d+)*$")


def poetry_specifier(text: str) -> SpecifierSet | None:
    """Poetry's version constraint as a PEP 440 SpecifierSet; None for forms not understood.

    ``0.43.3`` is an exact pin; ``^0.43`` is ``>=0.43,<0.44`` (the first non-zero part may
    not change); ``~0.43.3`` is ``>=0.43.3,<0.44.0``; ``1.2.*`` is ``==1.2.*``; operators
    are PEP 440's; constraints joined by commas must all hold. ``||`` (either of) is not
    translated.
    """
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    text = text.strip()
    if not text or text == "*":
        return SpecifierSet()
    if "|" in text:
        return None
    parts: list[str] = []
    for raw in text.split(","):
        part = raw.strip()
        translated = _poetry_part(part)
        if translated is None:
            return None
        parts.extend(translated)
    try:
        return SpecifierSet(",".join(parts))
    except InvalidSpecifier:
        return None


def _poetry_part(part: str) -> list[str] | None:
    if not part:
        return None
    if part.startswith(("^", "~")) and not part.startswith("~="):
        version = part[1:].strip()
        if not _POETRY_RELEASE_RE.match(version):
            return None
        release = [int(n) for n in version.split(".")]
        if part[0] == "^":
            # Caret: the left-most non-zero part stays; ^0.0.3 allows only 0.0.3.x.
            bump = next((i for i, n in enumerate(release) if n), len(release) - 1)
        else:
            # Tilde: the minor version stays when one is given, else the major.
            bump = 1 if len(release) >= 2 else 0
        upper = [*release[:bump], release[bump] + 1]
        return [f">={version}", f"<{'.'.join(map(str, upper))}"]
    match = _POETRY_OPERATOR_RE.match(part)
    if match:
        return [f"{match.group(1)}{match.group(2).strip()}"]
    if part.endswith(".*") or _looks_like_version(part):
        return [f"=={part}"]  # a bare version is an exact pin in Poetry
    return None


def _looks_like_version(text: str) -> bool:
    from packaging.version import InvalidVersion, Version

    try:
        Version(text)
    except InvalidVersion:
        return False
    return True
