"""Settings from ``[tool.gpuport]`` in the nearest ``pyproject.toml``, overridden by flags.

Each value remembers where it came from (default, file, or flag), so that ``--show-settings``
and error messages can say so.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpuport import kb
from gpuport.files import DEFAULT_MAX_FILE_BYTES
from gpuport.findings import Severity
from gpuport.read_policy import ReadRefused, read_regular, read_within


class ConfigError(ValueError):
    """A setting that cannot be used; the message names the file and key."""


@dataclass(slots=True)
class Settings:
    fail_on: Severity | None = Severity.MEDIUM  # None: never fail on findings
    exclude: tuple[str, ...] = ()
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    max_file_size: int = DEFAULT_MAX_FILE_BYTES
    baseline: str | None = None
    rocm_version: str = kb.DEFAULT_ROCM_VERSION
    offload_arch: str = kb.DEFAULT_CHECK_OFFLOAD_ARCH
    sources: dict[str, str] = field(default_factory=dict)  # key -> "default" | path | "flag"

    def source_of(self, key: str) -> str:
        return self.sources.get(key, "default")


_KEYS = {
    "fail-on": "fail_on",
    "exclude": "exclude",
    "select": "select",
    "ignore": "ignore",
    "max-file-size": "max_file_size",
    "baseline": "baseline",
    "rocm-version": "rocm_version",
    "offload-arch": "offload_arch",
}

# Tables inside [tool.gpuport] that other stages read: [tool.gpuport.decision] (assess).
SUBTABLES = frozenset({"decision"})


# pyproject.toml and baseline files larger than this are not configuration: refused, not read.
CONFIG_MAX_BYTES = 16 * 1024 * 1024
# The largest --max-file-size / max-file-size taken (1 TiB): beyond it a size is a typo.
MAX_SIZE_SETTING = 1 << 40


def find_pyproject(start: Path) -> Path | None:
    """The nearest ``pyproject.toml`` with a ``[tool.gpuport]`` table, walking up from ``start``."""
    found = _find_table(start)
    return found[0] if found is not None else None


def _find_table(start: Path) -> tuple[Path, object] | None:
    """The nearest ``pyproject.toml`` with a ``[tool.gpuport]`` table, and that table."""
    here = start.resolve()
    if not here.is_dir():
        here = here.parent
    for folder in (here, *here.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            try:
                data = tomllib.loads(read_regular(candidate, CONFIG_MAX_BYTES).decode("utf-8"))
            except (OSError, ReadRefused, ValueError, RecursionError):
                # bad UTF-8, bad TOML or nested deeper than tomllib goes: the scan itself
                # reports a broken pyproject.toml
                continue
            tool = data.get("tool")
            if isinstance(tool, dict) and "gpuport" in tool:
                return candidate, tool["gpuport"]
    return None


def parse_size(text: object) -> int:
    """'8M', '512k', '1G' or a plain number of bytes (a TOML integer or string)."""
    if isinstance(text, bool) or not isinstance(text, int | str):
        raise ConfigError(
            f"size {text!r} is not a number of bytes: use a whole number or a string like '8M'"
        )
    if isinstance(text, int):
        value = text
    else:
        s = text.strip().upper().removesuffix("B")
        mult = {"K": 1024, "M": 1024**2, "G": 1024**3}.get(s[-1:], 1)
        digits = s[:-1] if s[-1:] in "KMG" and s[-1:] else s
        try:
            value = int(float(digits) * mult)
        except (ValueError, OverflowError):  # 'abc', 'inf', 'nan', '1e400'
            raise ConfigError(f"size {text!r} is not a number of bytes (try 8M or 512k)") from None
    if value <= 0:
        raise ConfigError(f"size {text!r} must be positive")
    if value > MAX_SIZE_SETTING:
        raise ConfigError(f"size {text!r} is over the largest size taken (1024G)")
    return value


def parse_fail_on(text: str) -> Severity | None:
    if text.strip().lower() in ("never", "none"):
        return None
    try:
        return Severity.parse(text)
    except ValueError as exc:
        raise ConfigError(f"{exc}, or 'never'") from None


def load_settings(target: Path, overrides: dict[str, Any] | None = None) -> Settings:
    """Settings for scanning ``target``: defaults, then the pyproject table, then flags."""
    settings = Settings()
    found = _find_table(target)
    if found is not None:
        pyproject, table = found
        if not isinstance(table, dict):
            raise ConfigError(f"{pyproject}: [tool.gpuport] must be a table")
        for key, value in table.items():
            if key in SUBTABLES:
                continue  # read by the stage it belongs to (assess/settings.py)
            if key not in _KEYS:
                known = ", ".join(sorted(_KEYS))
                raise ConfigError(f"{pyproject}: unknown key {key!r} in [tool.gpuport] ({known})")
            _apply(settings, _KEYS[key], value, str(pyproject))
    for attr, value in (overrides or {}).items():
        if value is not None and value != ():
            _apply(settings, attr, value, "flag")
    return settings


def _apply(settings: Settings, attr: str, value: Any, source: str) -> None:
    try:
        if attr == "fail_on":
            settings.fail_on = parse_fail_on(str(value))
        elif attr in ("exclude", "select", "ignore"):
            if isinstance(value, str):
                value = [value]
            if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
                raise ConfigError("must be a list of strings")
            setattr(settings, attr, tuple(value))
        elif attr == "max_file_size":
            settings.max_file_size = parse_size(value)
        elif attr == "baseline":
            if not isinstance(value, str) or not value.strip():
                raise ConfigError(f"{value!r} is not a file name")
            # a baseline named in pyproject.toml lives beside it, wherever gpuport is run from
            base = Path(source).parent if source not in ("flag", "default") else Path()
            settings.baseline = str(base / value)
        elif attr == "rocm_version":
            if not re.fullmatch(r"\d+\.\d+(?:\.\d+)?", str(value).strip()):
                raise ConfigError(f"{value!r} is not a ROCm version (e.g. 6.4)")
            settings.rocm_version = str(value).strip()
        elif attr == "offload_arch":
            if not re.fullmatch(r"gfx[0-9a-f]+(?:[:+-][\w:+-]*)?", str(value).strip()):
                raise ConfigError(f"{value!r} is not an AMD GPU target (e.g. gfx90a)")
            settings.offload_arch = str(value).strip()
        else:
            raise ConfigError(f"unknown setting {attr}")
    except ConfigError as exc:
        key = attr.replace("_", "-")
        where = f"--{key}" if source == "flag" else f"{source}: [tool.gpuport] {key}"
        raise ConfigError(f"{where}: {exc}") from None
    settings.sources[attr] = source


def load_baseline(settings: Settings) -> frozenset[str]:
    """The fingerprints in the baseline file ``settings`` name (none when it names none).

    A baseline named in ``pyproject.toml`` is read only if it is a regular file inside that
    file's folder; one given with ``--baseline`` may be anywhere (the user chose it), but must
    be a regular file too. Either is read only up to :data:`CONFIG_MAX_BYTES`.
    """
    path = settings.baseline
    if not path:
        return frozenset()
    source = settings.source_of("baseline")
    named_by = (
        "baseline file" if source in ("flag", "default") else f"{source}: [tool.gpuport] baseline:"
    )
    try:
        if source in ("flag", "default"):
            data = read_regular(path, CONFIG_MAX_BYTES)
        else:
            data = read_within(Path(source).parent, path, CONFIG_MAX_BYTES)
    except FileNotFoundError:
        raise ConfigError(f"{named_by} {path} does not exist") from None
    except ReadRefused as refused:
        raise ConfigError(f"{named_by} {path}: {refused.reason}") from None
    try:
        document = json.loads(data.decode("utf-8"))
    except RecursionError:
        raise ConfigError(f"{path}: not a gpuport baseline file (nested too deeply)") from None
    except ValueError as exc:  # bad UTF-8 or bad JSON
        raise ConfigError(f"{path}: not a gpuport baseline file ({exc})") from None
    prints = document.get("fingerprints") if isinstance(document, dict) else None
    if not isinstance(prints, list) or not all(isinstance(p, str) for p in prints):
        raise ConfigError(
            f"{path}: not a gpuport baseline file (no list of strings under 'fingerprints')"
        )
    return frozenset(prints)
