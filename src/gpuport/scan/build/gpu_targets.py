"""Which AMD GPUs a project's ROCm build compiles for: targets taken from the build machine's GPU
(GP512) and arch lists that leave out current AMD GPUs (GP513).

Both read lines of text (CMake, Makefiles, shell scripts, Dockerfiles, CI files, setup.py): the
sites are assignments of the ROCm arch variables (PYTORCH_ROCM_ARCH, GPU_TARGETS,
AMDGPU_TARGETS, CMAKE_HIP_ARCHITECTURES, GPU_ARCHS, HIP_ARCHITECTURES and names like
``bnb_rocm_arch``) and ``--offload-arch`` options. A list grown over several lines
(``ARCH="${ARCH};gfx950"``) is judged by all of its lines together.
"""

from __future__ import annotations

import ast
import functools
import re
import warnings
from collections.abc import Iterator

from gpuport.files import FileKind, SourceText
from gpuport.findings import Category, Confidence, Finding, Severity
from gpuport.kb.archs import gpu_architectures
from gpuport.rules import Rule, case_variants, rule
from gpuport.scan.base import ScanOutput, scanner
from gpuport.scan.build.py_branches import cuda_side_only

_OFFLOAD_ARCH_DOC = "https://rocm.docs.amd.com/projects/HIP/en/latest/install/build.html"
_SUPPORT_MATRIX = "https://rocm.docs.amd.com/projects/install-on-linux/en/latest/reference/system-requirements.html"

# A ROCm arch variable's name: the well-known ones, or a project's own (bnb_rocm_arch).
_ARCH_VARIABLE = (
    r"(?i:[A-Za-z_]*(?:ROCM_ARCH|HIP_ARCH|AMDGPU_TARGETS|GPU_TARGETS|GPU_ARCHS|OFFLOAD_ARCH)"
    r"[A-Za-z_]*|CMAKE_HIP_ARCHITECTURES)"
)
_ARCH_VARIABLE_RE = re.compile(r"(?<![\w$])(" + _ARCH_VARIABLE + r")\b")
_GFX_RE = re.compile(r"\bgfx[0-9a-f]{3,4}\b")
_OFFLOAD_RE = re.compile(r"--(?:offload-arch|amdgpu-target)[= {]")
# `native` where a target list goes: --offload-arch=native, GPU_ARCHS default "native",
# CMAKE_HIP_ARCHITECTURES native.
_NATIVE_RE = re.compile(
    r"(?:--(?:offload-arch|amdgpu-target)=|" + _ARCH_VARIABLE + r"""\b[^\n]{0,40}?)["']?native\b"""
)
# A line that is (part of) a message rather than a setting: `raise …("set GPU_ARCHS='gfx942'")`,
# a string continuation line, a print or a log call.
_MESSAGE_LINE_RE = re.compile(
    r"""^\s*(?:[rfbu]{0,2}["']|raise\b|print\(|echo\b|message\()|\b(?:warn|log\w*|info|error)\("""
)
# setup.py's own name for a list of targets: `allowed_archs = ["gfx90a", "gfx942"]`,
# `SUPPORTED_ROCM_ARCHS = (...)`; the list is read when its line names gfx targets.
_PY_ARCH_LIST_RE = re.compile(r"^\s*(\w*archs?\w*)\s*(?::[^=]*)?=\s*[\[({]", re.IGNORECASE)
# An allow-list: the build refuses every target not in it (`assert a in allowed_archs`).
_ALLOW_WORDS_RE = re.compile(r"(?i)allow|support|valid|known|accept")
# setup.py asking the GPU on the build machine which architecture to compile for.
_DEVICE_QUERY_RE = re.compile(r"\btorch\.cuda\.(get_device_capability|get_device_properties)\s*\(")


GPU_ARCH_FROM_BUILD_MACHINE = rule(
    id="GP512",
    slug="gpu-arch-from-build-machine",
    category=Category.BUILD,
    severity=Severity.MEDIUM,
    confidence=Confidence.MEDIUM,
    summary="The ROCm build takes its GPU targets from the build machine's GPU (native)",
    what=(
        "Finds `native` where a ROCm target list goes (`--offload-arch=native`, a "
        "`GPU_ARCHS`/`HIP_ARCHITECTURES`/`PYTORCH_ROCM_ARCH` default of 'native', "
        "`CMAKE_HIP_ARCHITECTURES native`) and setup.py asking "
        "`torch.cuda.get_device_capability()` / `get_device_properties()` at build time; in "
        "other Python files, `PYTORCH_ROCM_ARCH` set from the visible GPUs' `gcnArchName` "
        "(a JIT build at import) when the file never reads a PYTORCH_ROCM_ARCH the user set. "
        "A setup.py query that runs only on the CUDA side of a ROCm test (the `else` of `if "
        "ROCM_VERSION:`, or a helper called only there) is left alone: a ROCm build never asks."
    ),
    why=(
        "A Docker build, a CI runner or a login node has no visible GPU: `native` finds no "
        "target and the compile fails, and the device query raises or answers for the wrong "
        "GPU. On ROCm the capability is a gfx version, not an sm number. Wheels built this way "
        "run only on the GPU of the machine that built them."
    ),
    example="cc_flag = [f\"--offload-arch={os.getenv('HIP_ARCHITECTURES', 'native')}\"]\n",
    instead=(
        "archs = os.getenv('PYTORCH_ROCM_ARCH', 'gfx90a;gfx942;gfx950;gfx1100;gfx1201')\n"
        "cc_flag = [f'--offload-arch={a}' for a in archs.split(';')]\n"
    ),
    fix=(
        "Default to an explicit list of gfx targets (PYTORCH_ROCM_ARCH's convention) and let "
        "users narrow it; never query the GPU while building."
    ),
    mechanical=False,
    references=(_OFFLOAD_ARCH_DOC, "https://github.com/Dao-AILab/causal-conv1d/issues/57"),
    needles=("native", "get_device_capability", "get_device_properties"),
)

ROCM_ARCH_LIST_GAPS = rule(
    id="GP513",
    slug="rocm-arch-list-gaps",
    category=Category.BUILD,
    severity=Severity.MEDIUM,
    confidence=Confidence.MEDIUM,
    summary="The project's ROCm arch list leaves out current AMD GPUs",
    what=(
        "Collects the gfx targets a file gives its ROCm arch variables and `--offload-arch` "
        "options, all lines together; where there are two or more, names the current Instinct "
        "targets (and, where the list has Radeon targets, the current Radeon ones) that are "
        "missing. In setup.py it also reads the project's own lists (`allowed_archs = [...]`); "
        "one that the build tests targets against (`assert a in allowed_archs`, an allow-list) "
        "refuses every GPU it leaves out, Radeon ones included. The knowledge base "
        "(kb/gpu_arch.toml) says which targets are current."
    ),
    why=(
        "A kernel library compiled without a GPU's target has no code object for it: on that "
        "GPU the import fails or the op raises 'no kernel image / invalid device function'. "
        "Lists written before MI355X (gfx950) or RDNA4 (gfx1200/gfx1201) leave those out."
    ),
    example='set(CMAKE_HIP_ARCHITECTURES "gfx90a;gfx942;gfx1100")\n',
    instead='set(CMAKE_HIP_ARCHITECTURES "gfx90a;gfx942;gfx950;gfx1100;gfx1101;gfx1200;gfx1201")\n',
    fix="Add the missing gfx targets the project's users run (the message names them).",
    mechanical=False,
    references=(_SUPPORT_MATRIX, _OFFLOAD_ARCH_DOC),
    needles=case_variants("gfx"),
)

GPU_TARGET_RULES: tuple[Rule, ...] = (GPU_ARCH_FROM_BUILD_MACHINE, ROCM_ARCH_LIST_GAPS)


@functools.cache
def _current_targets() -> tuple[frozenset[str], frozenset[str]]:
    """(current Instinct targets, current discrete Radeon targets): officially supported, CDNA2
    or newer / RDNA3 or newer, from the knowledge base."""
    instinct: set[str] = set()
    radeon: set[str] = set()
    for gfx, arch in gpu_architectures().items():
        if not arch.officially_supported:
            continue
        if arch.family.startswith("CDNA") and arch.family != "CDNA1":
            instinct.add(gfx)
        elif arch.family.startswith(("RDNA3", "RDNA4")) and "APU" not in arch.family:
            radeon.add(gfx)
    return frozenset(instinct), frozenset(radeon)


def _is_instinct(gfx: str) -> bool:
    return gfx.startswith("gfx9")


def missing_targets(listed: set[str]) -> list[str]:
    """The current targets a list of gfx ids leaves out: Instinct ones when it names an
    Instinct target (or no Radeon one), Radeon ones when it names a Radeon target."""
    instinct, radeon = _current_targets()
    missing: set[str] = set()
    has_instinct = any(_is_instinct(g) for g in listed)
    has_radeon = any(g.startswith(("gfx11", "gfx12")) for g in listed)
    if has_instinct or not has_radeon:
        missing |= instinct - listed
    if has_radeon:
        missing |= radeon - listed
    return sorted(missing, key=lambda g: (not _is_instinct(g), g))


def _on_cuda_side(text: str, line: int) -> bool:
    """The setup.py's GPU query on ``line`` runs only when the build is for CUDA (the else of
    ``if ROCM_VERSION:``, or a helper only called there): a ROCm build never asks."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # odd literals in user code warn on stderr
            tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return cuda_side_only(tree, line)


def _gpu_target_findings(source: SourceText, enabled: frozenset[str]) -> Iterator[Finding]:
    rel = source.file.rel
    lines = source.text.splitlines()
    wants_native = GPU_ARCH_FROM_BUILD_MACHINE.id in enabled
    wants_gaps = ROCM_ARCH_LIST_GAPS.id in enabled
    # Each arch variable (or the file's --offload-arch options, as one list): its first line
    # and every gfx target it is given.
    lists: dict[str, tuple[int, int, set[str]]] = {}
    own_names: set[str] = set()  # setup.py's own list names, shown as written
    told_native = False  # one finding per file: the build's one way of choosing its targets
    for number, line in enumerate(lines, start=1):
        if line.lstrip().startswith(("#", "//")):
            continue
        if _MESSAGE_LINE_RE.search(line) and not _OFFLOAD_RE.search(line):
            continue  # words of a message (an example value, not a setting)
        if wants_native and not told_native:
            native = _NATIVE_RE.search(line)
            if native:
                told_native = True
                yield GPU_ARCH_FROM_BUILD_MACHINE.finding(
                    rel,
                    number,
                    native.start() + 1,
                    message=(
                        "compiles for the build machine's GPU (native): a build without a "
                        "visible GPU (Docker, CI) fails, and the result runs only on that GPU"
                    ),
                )
            elif (
                source.file.kind is FileKind.SETUP_PY
                and (query := _DEVICE_QUERY_RE.search(line))
                and not _on_cuda_side(source.text, number)
            ):
                told_native = True
                yield GPU_ARCH_FROM_BUILD_MACHINE.finding(
                    rel,
                    number,
                    query.start() + 1,
                    message=(
                        f"setup.py asks torch.cuda.{query.group(1)}() at build time: it fails "
                        "where the build sees no GPU, and on ROCm it answers with a gfx version"
                    ),
                )
        if not wants_gaps:
            continue
        targets = set(_GFX_RE.findall(line))
        if not targets:
            continue
        variable = _ARCH_VARIABLE_RE.search(line)
        own = _PY_ARCH_LIST_RE.match(line) if source.file.kind is FileKind.SETUP_PY else None
        if own is not None:
            key, column = own.group(1), own.start(1) + 1  # the project's name, as written
            own_names.add(key)
        elif variable is not None:
            key = variable.group(1).lower()
            column = variable.start() + 1
        elif _OFFLOAD_RE.search(line):
            key, column = "--offload-arch", line.find("--") + 1
        else:
            continue
        _first, _column, listed = lists.setdefault(key, (number, column, set()))
        listed |= targets
    for key, (number, column, listed) in lists.items():
        if source.file.kind is FileKind.SETUP_PY and _refuses_others(source.text, key):
            refused = _refused(listed)
            if refused:
                yield _allow_list_finding(rel, number, column, key, listed, refused)
            continue
        # One target is a deliberate choice (the deployment's GPU), not a list meant to cover
        # the GPUs a project's users run.
        missing = missing_targets(listed) if len(listed) > 1 else []
        if missing:
            shown = key if key == "--offload-arch" or key in own_names else key.upper()
            yield ROCM_ARCH_LIST_GAPS.finding(
                rel,
                number,
                column,
                message=(
                    f"{shown} builds for {';'.join(sorted(listed))} and leaves out "
                    f"{', '.join(missing)}: the build has no code for those GPUs"
                ),
                fix=f"Add {';'.join(missing)} to the list if the project's users run them.",
            )


def _refuses_others(text: str, key: str) -> bool:
    """setup.py's list ``key`` is an allow-list: named so, or tested with ``in`` by an assert
    or a condition that raises (flash-attention's ``assert all(a in allowed_archs …)``)."""
    name = re.escape(key)
    tested = re.search(rf"(?i)\b(?:not\s+)?in\s+{name}\b", text)
    if tested is None:
        return False
    before = text.rfind("\n", 0, tested.start()) + 1
    statement = text[before : text.find("\n", tested.end())]
    return bool(_ALLOW_WORDS_RE.search(key)) or bool(
        re.search(r"\b(?:assert|raise|if)\b", statement)
    )


def _refused(listed: set[str]) -> list[str]:
    """The current targets, Instinct and Radeon, an allow-list leaves out (so refuses)."""
    instinct, radeon = _current_targets()
    return sorted((instinct | radeon) - listed, key=lambda g: (not _is_instinct(g), g))


def _allow_list_finding(
    rel: str, number: int, column: int, key: str, listed: set[str], refused: list[str]
) -> Finding:
    """GP513 for an allow-list: every current target it leaves out is refused, Radeon ones too."""
    return ROCM_ARCH_LIST_GAPS.finding(
        rel,
        number,
        column,
        message=(
            f"{key} accepts only {';'.join(sorted(listed))}: the ROCm build refuses "
            f"{', '.join(refused)} (current AMD GPUs), so users of those GPUs get an error "
            "instead of a build"
        ),
        fix=(
            f"Accept the targets the kernels support ({';'.join(refused)}), or warn rather "
            "than refuse a target outside the tested list."
        ),
    )


@scanner(
    FileKind.CMAKE,
    FileKind.MAKEFILE,
    FileKind.SHELL,
    FileKind.DOCKERFILE,
    FileKind.YAML,
    FileKind.SETUP_PY,
    name="gpu-targets",
)
def scan_gpu_targets(source: SourceText, enabled: frozenset[str]) -> ScanOutput:
    """GP512 and GP513 over one file's lines."""
    if not any(r.id in enabled for r in GPU_TARGET_RULES):
        return
    text = source.text
    if "native" not in text and "gfx" not in text and "get_device_" not in text:
        return
    yield from _gpu_target_findings(source, enabled)


# Python that builds an extension for the GPUs it sees: the arch list comes from
# torch.cuda.get_device_properties(i).gcnArchName and goes into PYTORCH_ROCM_ARCH.
_SETS_ROCM_ARCH_RE = re.compile(
    r"""(?:environ\[\s*["']PYTORCH_ROCM_ARCH["']\s*\]\s*=[^=]|putenv\(\s*["']PYTORCH_ROCM_ARCH)"""
)
# Reading PYTORCH_ROCM_ARCH first lets a build without a GPU name its targets: a fallback.
_READS_ROCM_ARCH_RE = re.compile(
    r"""(?:get|getenv|pop)\(\s*["']PYTORCH_ROCM_ARCH|["']PYTORCH_ROCM_ARCH["']\s+(?:not\s+)?in\b"""
)


def _arch_from_visible_devices(source: SourceText) -> Iterator[Finding]:
    """GP512 in Python: PYTORCH_ROCM_ARCH set from the visible GPUs, with no user override."""
    text = source.text
    if _READS_ROCM_ARCH_RE.search(text):
        return
    for number, line in enumerate(text.splitlines(), start=1):
        found = _SETS_ROCM_ARCH_RE.search(line)
        if found and not line.lstrip().startswith("#"):
            yield GPU_ARCH_FROM_BUILD_MACHINE.finding(
                source.file.rel,
                number,
                found.start() + 1,
                message=(
                    "sets PYTORCH_ROCM_ARCH from the visible GPUs (gcnArchName): with no GPU "
                    "visible (a build container, CI) the list is empty and the build fails, and "
                    "the user's own PYTORCH_ROCM_ARCH is overwritten"
                ),
                fix=(
                    "Keep a PYTORCH_ROCM_ARCH the user set; otherwise use the visible GPUs' "
                    "gfx targets, and an explicit list when there are none."
                ),
            )
            return  # one way of choosing the targets per file


@scanner(FileKind.PYTHON, name="gpu-targets-python")
def scan_arch_from_visible_devices(source: SourceText, enabled: frozenset[str]) -> ScanOutput:
    """GP512 over a Python file that asks the visible GPUs for their gfx targets."""
    text = source.text
    if GPU_ARCH_FROM_BUILD_MACHINE.id not in enabled or "gcnArchName" not in text:
        return
    if "PYTORCH_ROCM_ARCH" in text:
        yield from _arch_from_visible_devices(source)
