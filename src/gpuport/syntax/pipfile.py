"""Pipenv's Pipfile: ``[[source]]`` indexes and ``[packages]`` / ``[dev-packages]`` tables."""

from __future__ import annotations

from gpuport.syntax.dependencies import DependencyFile, IndexRole
from gpuport.syntax.pyproject import table, table_requirement, toml_dependency_file, toml_index
from gpuport.syntax.toml import TomlLocator


def parse_pipfile(text: str, path: str) -> DependencyFile:
    """Pipenv's Pipfile: [[source]] indexes and [packages] / [dev-packages] tables."""
    result, data = toml_dependency_file(text, path)
    if data is None:
        return result
    locator = TomlLocator(text)
    raw = data.get("source", [])
    for occurrence, source in enumerate(raw if isinstance(raw, list) else []):
        if not isinstance(source, dict) or not isinstance(source.get("url"), str):
            continue
        # Pipenv installs from the first source unless a package names another (index = ...).
        role = IndexRole.PRIMARY if occurrence == 0 else IndexRole.NAMED
        result.indexes.append(toml_index(locator, path, ("source",), occurrence, source, role))
    for section in ("packages", "dev-packages"):
        for name, value in table(data, section).items():
            requirement = table_requirement(locator, path, (section,), name, value, section)
            if requirement is not None:
                result.requirements.append(requirement)
    return result
