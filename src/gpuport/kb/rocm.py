"""The ROCm release gpuport targets by default, and how a ROCm version goes into index URLs and
image references (platform.toml [defaults] and [pytorch_rocm])."""

from __future__ import annotations

import functools

from gpuport.kb.loader import KbError, load_toml, table_entry

PLATFORM_TOML = "platform.toml"
_DEFAULTS = table_entry(load_toml(PLATFORM_TOML), "defaults", PLATFORM_TOML)

# What gpuport proposes when the user names nothing else (platform.toml [defaults] says why):
# the ROCm release, the AMD GPU targets for a CUDA architecture list, and `port --check`'s one.
DEFAULT_ROCM_VERSION: str = _DEFAULTS.text("rocm_version")
DEFAULT_OFFLOAD_ARCHS: tuple[str, ...] = _DEFAULTS.texts("offload_archs", required=True)
DEFAULT_CHECK_OFFLOAD_ARCH: str = _DEFAULTS.text("check_offload_arch")

_ROCM_PLACEHOLDER = "{rocm}"
_ROCM_NODOT_PLACEHOLDER = "{rocm_nodot}"
_PYTORCH_INDEX_PREFIX = "https://download.pytorch.org/whl/"


@functools.cache
def pytorch_rocm_versions() -> tuple[str, ...]:
    """ROCm versions for which download.pytorch.org publishes a stable ``whl/rocmX.Y`` index."""
    entry = table_entry(load_toml(PLATFORM_TOML), "pytorch_rocm", PLATFORM_TOML)
    versions = entry.texts("published", required=True)
    entry.sources()
    entry.date()
    return tuple(sorted(versions, key=_version_key))


def _version_key(version: str) -> tuple[int, ...]:
    try:
        return tuple(int(part) for part in version.split("."))
    except ValueError:
        raise KbError(f"not a ROCm version: {version!r}") from None


def pytorch_rocm_index(rocm_version: str = DEFAULT_ROCM_VERSION) -> str:
    """PyTorch's index URL for the newest published ROCm version not above ``rocm_version``.

    A version below every published one gets the oldest published index.
    """
    wanted = _version_key(rocm_version.strip().removeprefix("rocm"))
    published = pytorch_rocm_versions()
    chosen = published[0]
    for version in published:
        if _version_key(version) <= wanted:
            chosen = version
    return f"{_PYTORCH_INDEX_PREFIX}rocm{chosen}"


def fill_index(template: str, rocm_version: str) -> str:
    """Put ``rocm_version`` into an index URL template.

    PyTorch's stable index exists only for the versions in ``pytorch_rocm_versions()``, so
    that one is snapped to the nearest published version; anything else is substituted.
    """
    stable = f"{_PYTORCH_INDEX_PREFIX}rocm{_ROCM_PLACEHOLDER}"
    if template.startswith(stable):
        return pytorch_rocm_index(rocm_version) + template.removeprefix(stable)
    return substitute_rocm(template, rocm_version)


def substitute_rocm(template: str, rocm_version: str) -> str:
    version = rocm_version.strip().removeprefix("rocm")
    return template.replace(_ROCM_PLACEHOLDER, version).replace(
        _ROCM_NODOT_PLACEHOLDER, version.replace(".", "")
    )
