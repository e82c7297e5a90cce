"""Pipenv's Pipfile: ``[[source]]`` indexes and ``[packages]`` / ``[dev-packages]`` tables."""

from __future__ import annotations

from typing import Any

from gpuport.syntax.dependencies import DependencyFile, IndexRole
from gpuport.syntax.pyproject import table, table_requirement, toml_dependency_file, toml_indexes
from gpuport.syntax.toml import TomlLocator


def _pipenv_role(occurrence: int, _source: dict[str, Any]) -> IndexRole:
    # Pipenv installs from the first source unless a package names another (index = ...).
    return IndexRole.PRIMARY if occurrence == 0 else IndexRole.NAMED


def parse_pipfile(text: str, path: str) -> DependencyFile:
    """Pipenv's Pipfile: [[source]] indexes and [packages] / [dev-packages] tables."""
    result, data = toml_dependency_file(text, path)
    if data is None:
        return result
    locator = TomlLocator(text)
    result.indexes.extend(toml_indexes(data, locator, path, ("source",), _pipenv_role))
    for section in ("packages", "dev-packages"):
        for name, value in table(data, section).items():
            requirement = table_requirement(locator, path, (section,), name, value, section)
            if requirement is not None:
                result.requirements.append(requirement)
    return result
