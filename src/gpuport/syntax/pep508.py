"""Requirement strings: PEP 508 (through ``packaging``) and pip's URL and path forms.

``packaging`` reads PEP 508; what it does not cover is pip's own syntax for a requirement that
is a location (``git+https://...#egg=name``, ``./wheels/x.whl``, an archive URL), where the
name and the build's local version label come from the file name.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

# ``packaging`` (about 40 ms to import) is imported where a requirement is read: a scan of a
# tree without requirements, a Python-only one, never loads it.

URL_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://|^file:")
_ARCHIVE_RE = re.compile(r"\.(whl|zip|tar\.gz|tgz|tar\.bz2|tar\.xz|tar)$", re.IGNORECASE)
_SDIST_RE = re.compile(r"^(?P<name>.+?)-(?P<version>\d[^-]*)\.(zip|tar\.gz|tgz|tar\.bz2|tar\.xz)$")
_EGG_RE = re.compile(r"[#&]egg=([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?")
_LOCAL_RE = re.compile(r"\+([A-Za-z0-9][A-Za-z0-9._-]*)")


def normalize(name: str) -> str:
    """PEP 503 normalized distribution name."""
    if not name:
        return ""
    # PEP 503's ``re.sub(r"[-_.]+", "-", name).lower()`` as ``packaging.utils.canonicalize_name``
    # works it out (https://peps.python.org/pep-0503/#normalized-names), without importing it.
    value = name.lower().replace("_", "-").replace(".", "-")
    while "--" in value:
        value = value.replace("--", "-")
    return value


def local_label(version_text: str) -> str:
    """The local version label in ``2.3.0+cu121`` ("cu121"), or ""."""
    match = _LOCAL_RE.search(version_text)
    return match.group(1) if match else ""


def name_from_url(url: str) -> tuple[str, str]:
    """(distribution name, local label) that a wheel/sdist/VCS URL names, as far as it says."""
    egg = _EGG_RE.search(url)
    parts = urlsplit(url)
    filename = unquote(posixpath.basename(parts.path.rstrip("/")))
    if filename.lower().endswith(".whl"):
        from packaging.utils import InvalidWheelFilename, parse_wheel_filename
        from packaging.version import InvalidVersion

        try:
            name, version, _build, _tags = parse_wheel_filename(filename)
        except (InvalidWheelFilename, InvalidVersion):
            pass
        else:
            return str(name), version.local or ""
    sdist = _SDIST_RE.match(filename)
    if sdist:
        return sdist.group("name"), local_label(sdist.group("version"))
    if egg:
        return egg.group(1), ""
    return "", ""


@dataclass(frozen=True, slots=True)
class ParsedSpec:
    """The parts of one requirement string."""

    name: str
    extras: tuple[str, ...]
    specifier: str
    marker: str
    url: str
    local_version: str


def parse_requirement_string(text: str) -> ParsedSpec:
    """Parse a PEP 508 string, or a pip-style URL/path requirement.

    Raises ValueError with a short reason when it is neither.
    """
    stripped = text.strip()
    if not stripped:
        raise ValueError("empty requirement")
    looks_like_location = (
        bool(URL_RE.match(stripped))
        or stripped.startswith(("git+", "hg+", "svn+", "bzr+", ".", "/", "~"))
        or bool(_ARCHIVE_RE.search(stripped.split(";", 1)[0].strip()))
    )
    if looks_like_location:
        # pip splits a URL's marker at "; " (semicolon after whitespace) or at ";" + space
        pieces = re.split(r"\s+;\s*|;\s+", stripped, maxsplit=1)
        location = pieces[0].strip()
        marker = pieces[1].strip() if len(pieces) > 1 else ""
        name, local = name_from_url(location)
        egg = _EGG_RE.search(location)
        extras = (
            tuple(e.strip() for e in egg.group(2)[1:-1].split(",") if e.strip())
            if egg and egg.group(2)
            else ()
        )
        return ParsedSpec(name, extras, "", marker, location, local)
    from packaging.requirements import InvalidRequirement
    from packaging.requirements import Requirement as Pep508Requirement

    try:
        req = Pep508Requirement(stripped)
    except InvalidRequirement as exc:
        reason = str(exc).splitlines()[0] if str(exc) else "not a valid requirement"
        raise ValueError(reason) from None
    local = ""
    for spec in req.specifier:
        if spec.operator in ("==", "===") and "+" in spec.version:
            local = local_label(spec.version)
    url = req.url or ""
    if url and not local:
        local = name_from_url(url)[1]
    return ParsedSpec(
        req.name,
        tuple(sorted(req.extras)),
        str(req.specifier),
        str(req.marker) if req.marker else "",
        url,
        local,
    )
