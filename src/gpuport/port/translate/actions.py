"""What to do with each CUDA name of the API map when translating for one ROCm release."""

from __future__ import annotations

import functools
from dataclasses import dataclass

from gpuport.port.apimap import ApiEntry, Version, load_api_map, version_text

# Spellings the fast walk stops at by their first characters alone; other names it must see
# are listed one by one (see walk.py).
CANDIDATE_PREFIXES = ("cu", "CU", "Cu", "nv", "NV", "__", "_C")


@dataclass(frozen=True, slots=True)
class Rename:
    hip: str
    family: str
    note: str = ""


@dataclass(frozen=True, slots=True)
class Missing:
    family: str
    note: str
    call_only: bool  # plain names (sin, y0, texture...) are reported only when called


Action = Rename | Missing


@functools.cache
def actions(target: Version) -> dict[str, Action]:
    """What to do with each known CUDA name when translating for ROCm ``target``."""
    api = load_api_map()
    target_text = version_text(target)
    found: dict[str, Action] = {}
    for name, entry in api.entries.items():
        action = _action_for(entry, target, target_text)
        if action is not None:
            found[name] = action
    return found


def _action_for(entry: ApiEntry, target: Version, target_text: str) -> Action | None:
    plain = not entry.cuda.startswith(CANDIDATE_PREFIXES)
    extra = f"; {entry.note}" if entry.note else ""
    if not entry.hip:
        return Missing(entry.family, f"no HIP counterpart{extra}", plain)
    if entry.hip_removed is not None and entry.hip_removed <= target:
        return Missing(
            entry.family,
            f"{entry.hip} was removed in ROCm {version_text(entry.hip_removed)}{extra}",
            plain,
        )
    if entry.hip_added is not None and entry.hip_added > target and entry.hip_before:
        before_added = entry.hip_before_added
        if before_added is not None and before_added > target:
            return Missing(
                entry.family,
                f"{entry.hip_before} is not in ROCm {target_text} "
                f"(added in {version_text(before_added)}){extra}",
                plain,
            )
        renamed = f"named {entry.hip} from ROCm {version_text(entry.hip_added)}"
        return Rename(
            entry.hip_before, entry.family, f"{renamed}; {entry.note}" if entry.note else renamed
        )
    if entry.hip_added is not None and entry.hip_added > target:
        return Missing(
            entry.family,
            f"{entry.hip} is not in ROCm {target_text} "
            f"(added in {version_text(entry.hip_added)}){extra}",
            plain,
        )
    if entry.hip == entry.cuda:
        return None
    note = entry.note
    if entry.hip_deprecated is not None and entry.hip_deprecated <= target:
        deprecated = f"deprecated since ROCm {version_text(entry.hip_deprecated)}"
        note = f"{deprecated}; {note}" if note else deprecated
    return Rename(entry.hip, entry.family, note)
