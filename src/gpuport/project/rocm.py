"""Evidence that a project already builds or ships for ROCm, its ROCm macros and GPU targets.

Strict on purpose: a build branch, a CMake HIP language or option, a ROCm CI workflow or
Dockerfile, a README install section, HIP sources or a ROCm backend folder count; a word
"AMD" in prose does not.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from gpuport.project.model import Evidence
from gpuport.project.survey import Survey
from gpuport.project.texts import ProjectTexts

# Names a setup.py (or its build helpers) branches on to build for ROCm: torch's own
# (torch.version.hip, torch.utils.cpp_extension's IS_HIP_EXTENSION and ROCM_HOME) and the
# projects' (IS_ROCM, HIP_BUILD, BUILD_TARGET == "rocm", is_rocm_pytorch, ROCM_VERSION).
SETUP_ROCM_RE = re.compile(
    r"torch(?:_version|\.version)\.hip\b|\bIS_HIP_EXTENSION\b|\bROCM_HOME\b|\bIS_ROCM\w*"
    r"|\bis_rocm\w*|\buse_rocm\b|\bUSE_ROCM\b|\bHIP_BUILD\b|\bBUILD_HIP\b|\bROCM_VERSION\b"
    r"|BUILD_TARGET\s*==\s*[\"']rocm|\bhipcc\b|TRITON_AMD_ENABLE"
)
# CMake: the HIP language (enable_language / project LANGUAGES), find_package(hip), a HIP or
# ROCm option, or a branch on one (bitsandbytes: COMPUTE_BACKEND "hip" sets BUILD_HIP).
_CMAKE_ROCM_RE = re.compile(
    r"enable_language\s*\(\s*HIP\b|project\s*\([^)]*\bHIP\b|find_package\s*\(\s*(?:hip|rocm)\b"
    r"|option\s*\(\s*\w*(?:HIP|ROCM)\w*|if\s*\(\s*(?:NOT\s+)?\w*(?:BUILD_HIP|USE_ROCM|USE_HIP)\b"
    r"|STREQUAL\s+\"hip\"",
    re.IGNORECASE,
)
# A workflow or Dockerfile named for ROCm/AMD ("amd-mi200.yml", "Dockerfile_amd"), not "amd64".
_ROCM_NAME_RE = re.compile(r"(?<![a-z])(?:rocm|amd|hip|mi[23]\d\d)(?![a-z0-9])", re.IGNORECASE)
# A ROCm base image, ROCm wheel index or ROCm version in a workflow or Dockerfile.
_ROCM_CI_RE = re.compile(
    r"rocm/(?:pytorch|dev-|rocm-terminal|vllm)|whl/rocm|repo\.radeon\.com|ROCM_VERSION|rocm\d",
    re.IGNORECASE,
)
_EXTRA_START_RE = re.compile(r"[\"']?([A-Za-z0-9][\w.-]*)[\"']?\s*=\s*\[")
_ROCM_WHEEL_RE = re.compile(r"repo\.radeon\.com|whl/rocm|%2Brocm\d|\+rocm\d", re.IGNORECASE)
_ROCM_HEADING_RE = re.compile(r"\b(?:ROCm|AMD|HIP)\b")
_ROCM_INSTALL_RE = re.compile(r"(?:pip|uv pip)\s+install.*rocm|whl/rocm", re.IGNORECASE)
_MACRO_FLAG_RE = re.compile(r"-D\s*([A-Za-z_][A-Za-z0-9_]*)(?:=(\S*))?")
_MACRO_TUPLE_RE = re.compile(r"(?<![\w.])\(\s*[\"']([A-Za-z_][A-Za-z0-9_]*)[\"']\s*,")
_ROCM_MACRO_NAME_RE = re.compile(r"HIP|ROCM|AMD")
_ARCH_RE = re.compile(r"\bgfx(?:\d{3,4}|\d{2}[a-f])\b")
# torch.utils.cpp_extension compiles every HIP extension with -DUSE_ROCM=1 and
# -D__HIP_PLATFORM_AMD__=1 (COMMON_HIP_FLAGS,
# https://github.com/pytorch/pytorch/blob/main/torch/utils/cpp_extension.py).
TORCH_HIP_MACROS = frozenset({"USE_ROCM", "__HIP_PLATFORM_AMD__"})
_MAX_WORKFLOWS = 200  # a project with more workflows than this has them read in part


def rocm_evidence(texts: ProjectTexts, found: Survey) -> list[Evidence]:
    """Every strong piece of evidence of a ROCm path, at most one per file."""
    out: list[Evidence] = []
    for rel in [*found.setup_pys, *found.build_helpers]:
        hit = _first(texts.text(rel), SETUP_ROCM_RE, comment="#")
        if hit:
            line, token = hit
            out.append(Evidence(rel, line, f"{_name(rel)} branches on `{token}` to build for ROCm"))
    for rel in found.cmake_files:
        hit = _first(texts.text(rel), _CMAKE_ROCM_RE, comment="#")
        if hit:
            line, token = hit
            out.append(Evidence(rel, line, f"CMake builds for HIP (`{token.strip()}`)"))
    for rel in found.workflows[:_MAX_WORKFLOWS]:
        out.extend(_named_or_content(texts, rel, "CI workflow", comment="#"))
    for rel in found.dockerfiles:
        out.extend(_named_or_content(texts, rel, "Dockerfile", comment="#"))
    for rel in found.pyprojects:
        extra = _rocm_extra(texts.text(rel))
        if extra:
            line, name = extra
            what = f"the `{name}` extra installs ROCm builds (from a ROCm wheel index)"
            out.append(Evidence(rel, line, what))
    for rel in found.readmes:
        section = _install_section(texts.text(rel))
        if section:
            out.append(Evidence(rel, section, "the README has a ROCm/AMD install section"))
    if found.hip_sources:
        count = len(found.hip_sources)
        out.append(Evidence(found.hip_sources[0], 0, f"the project has {count} HIP source(s)"))
    for rel in found.backend_dirs:
        out.append(Evidence(rel, 0, "a ROCm backend folder (Composable Kernel, Triton AMD, HIP)"))
    return out


def _rocm_extra(text: str | None) -> tuple[int, str] | None:
    """(line, name) of the first optional-dependencies extra that pins a wheel from a ROCm
    index (unsloth's ``rocm72-torch291 = ["torch @ https://repo.radeon.com/rocm/...+rocm7.2..."]``)."""
    if not text or "optional-dependencies" not in text:
        return None
    in_extras = False
    extra: tuple[int, str] | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if stripped.startswith("["):
            in_extras = stripped == "[project.optional-dependencies]"
            extra = None
            continue
        if not in_extras or stripped.startswith("#"):
            continue
        start = _EXTRA_START_RE.match(stripped)
        if start:
            extra = (number, start.group(1))
        if extra and _ROCM_WHEEL_RE.search(stripped):
            return extra
    return None


def rocm_macros(texts: ProjectTexts, found: Survey, supports_rocm: bool) -> frozenset[str]:
    """Macros the ROCm build defines: -D flags, define_macros, CMake compile definitions."""
    names: set[str] = set()
    for rel in [*found.setup_pys, *found.build_helpers]:
        text = texts.text(rel) or ""
        # `from torch.utils.cpp_extension import …` or `from torch.utils import cpp_extension`
        if supports_rocm and "cpp_extension" in text:
            names |= TORCH_HIP_MACROS
        # A line's match is a match in the whole text: a file with none has no line to read.
        if "-D" not in text and _MACRO_TUPLE_RE.search(text) is None:
            continue
        for line in _code_lines(text, "#"):
            for match in _MACRO_FLAG_RE.finditer(line):
                if match.group(2) in (None, "", "1"):
                    names.add(match.group(1))
            names.update(m.group(1) for m in _MACRO_TUPLE_RE.finditer(line))
    for rel in found.cmake_files:
        from gpuport.syntax.cmake import cmake_commands  # only for a project with CMake files

        commands, _problem = cmake_commands(texts.text(rel) or "")
        for command in commands:
            if command.name in ("add_compile_definitions", "add_definitions"):
                for arg in command.args:
                    name, _, value = arg.value.removeprefix("-D").partition("=")
                    if value in ("", "1"):
                        names.add(name)
    return frozenset(n for n in names if _ROCM_MACRO_NAME_RE.search(n) and "VERSION" not in n)


def rocm_archs(texts: ProjectTexts, found: Survey) -> tuple[str, ...]:
    """The gfx targets named by the build files, CI workflows and Dockerfiles, sorted."""
    archs: set[str] = set()
    rels = [*found.setup_pys, *found.build_helpers, *found.cmake_files]
    for rel in [*rels, *found.workflows[:_MAX_WORKFLOWS], *found.dockerfiles]:
        text = texts.text(rel) or ""
        if "gfx" in text:  # every target names it
            for line in _code_lines(text, "#"):
                archs.update(_ARCH_RE.findall(line))
    return tuple(sorted(archs))


def _name(rel: str) -> str:
    return rel.rsplit("/", 1)[-1]


def _code_lines(text: str, comment: str) -> Iterable[str]:
    for line in text.splitlines():
        if not line.lstrip().startswith(comment):
            yield line


def _first(text: str | None, pattern: re.Pattern[str], comment: str) -> tuple[int, str] | None:
    # A line's match is a match in the whole text: one search of the text rules most files out.
    if not text or pattern.search(text) is None:
        return None
    for number, line in enumerate(text.splitlines(), start=1):
        if line.lstrip().startswith(comment):
            continue
        match = pattern.search(line)
        if match:
            return number, match.group(0)
    return None


def _named_or_content(texts: ProjectTexts, rel: str, what: str, comment: str) -> list[Evidence]:
    if _ROCM_NAME_RE.search(_name(rel)):
        return [Evidence(rel, 0, f"a {what} named for ROCm/AMD")]
    hit = _first(texts.text(rel), _ROCM_CI_RE, comment=comment)
    if hit:
        return [Evidence(rel, hit[0], f"a {what} that uses ROCm (`{hit[1]}`)")]
    return []


def _install_section(text: str | None) -> int:
    """The line of a README heading about ROCm/AMD, or of a ROCm install command; 0: none."""
    if not text:
        return 0
    lines = text.splitlines()
    for number, line in enumerate(lines, start=1):
        stripped = line.strip()
        underlined = number < len(lines) and re.fullmatch(r"[=\-~^]{3,}", lines[number].strip())
        heading = stripped.startswith("#") or bool(underlined)
        if heading and _ROCM_HEADING_RE.search(stripped):
            return number
        if _ROCM_INSTALL_RE.search(stripped):
            return number
    return 0
