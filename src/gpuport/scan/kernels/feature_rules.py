"""CUDA features HIP lacks or spells differently (GP315, GP319, GP322, GP324, GP325): each rule, then its check."""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Iterator

from gpuport.findings import Category, Confidence, Finding, Severity
from gpuport.kb.kernels import kernel_apis
from gpuport.rules import rule
from gpuport.scan.kernels.arch_branches import rocm_fallback_is_sound
from gpuport.scan.kernels.brackets import function_bodies
from gpuport.scan.kernels.references import (
    AMDGPU_BUILTINS,
    CUDA_12_RELEASE_NOTES,
    HIP_EXTENSIONS,
    HIP_GRAPHS,
    HIP_PORTING_GUIDE,
    HIP_TEXTURES,
    HIPIFY_APIS,
)
from gpuport.scan.kernels.source import KernelSource
from gpuport.scan.kernels.summaries import names_once_per_line
from gpuport.scan.kernels.words import words
from gpuport.syntax.preprocessor import names_rocm_macro

_TEXTURE_NAME_ANCHORS = (
    "texture",
    "surface",
    "Texture",
    "Surface",
    "TexRef",
    "SurfRef",
    "texref",
    "surfref",
)


# A texture<...> or surface<...> reference declaration, or a reference API.
@functools.cache
def _texture_ref_re() -> re.Pattern[str]:
    return re.compile(
        r"(?:texture|surface)\s*<[^;<>{}]*>\s*[A-Za-z_]\w*\s*[;,]|"
        + kernel_apis()["texture-reference-apis"].pattern.pattern
    )


TEXTURE_REFERENCE = rule(
    id="GP315",
    slug="texture-surface-reference",
    category=Category.KERNELS,
    severity=Severity.HIGH,
    confidence=Confidence.HIGH,
    summary="Legacy texture or surface references (removed in CUDA 12, deprecated in HIP)",
    what=(
        "Finds `texture<...> name;` and `surface<...> name;` reference declarations and the "
        "reference APIs (`cudaBindTexture*`, `cudaUnbindTexture`, `cudaBindSurfaceToArray`, "
        "`cudaGetTextureReference`, `cuTexRef*`). Texture and surface objects "
        "(`cudaTextureObject_t`) are fine and are not reported."
    ),
    why=(
        "CUDA 12 removed texture and surface references, and HIP marks its reference API "
        "deprecated (`hipBindTexture` since ROCm 3.8, `hipGetTextureReference` since 5.3), so "
        "a port would only move the problem. HIP supports texture objects, on devices that "
        "report image support."
    ),
    example="texture<float, 1, cudaReadModeElementType> tex;\ncudaBindTexture(0, tex, d, n);\n",
    instead=(
        "hipTextureObject_t tex;   // hipCreateTextureObject(&tex, &resDesc, &texDesc, nullptr)\n"
        "float v = tex1Dfetch<float>(tex, i);\n"
    ),
    fix=(
        "Convert to texture objects (`hipCreateTextureObject`, passed to the kernel as an "
        "argument), or to plain global loads; check `hipDeviceAttributeImageSupport` on the "
        "target GPU."
    ),
    mechanical=False,
    references=(HIP_TEXTURES, CUDA_12_RELEASE_NOTES),
    needles=_TEXTURE_NAME_ANCHORS,
)


def texture_surface_reference(src: KernelSource) -> Iterator[Finding]:
    """``texture<...> name;`` / ``surface<...> name;`` declarations and the reference APIs."""
    for m, name in names_once_per_line(src, _texture_ref_re(), _TEXTURE_NAME_ANCHORS):
        yield src.finding(
            TEXTURE_REFERENCE,
            m.start(),
            m.end(),
            message=f"{name}: legacy texture/surface references are gone in CUDA 12 and "
            "deprecated in HIP",
        )


_NANOSLEEP_RE = re.compile(r"__nanosleep\s*\(")

NANOSLEEP = rule(
    id="GP319",
    slug="nanosleep",
    category=Category.KERNELS,
    severity=Severity.LOW,
    confidence=Confidence.MEDIUM,
    summary="__nanosleep in device code; AMD GPUs sleep in clock ticks, not nanoseconds",
    what="Finds calls of `__nanosleep(ns)` in CUDA code.",
    why=(
        "`__nanosleep` is an sm_70+ CUDA intrinsic, usually in spin-wait back-off loops. "
        "Older HIP releases do not provide it; the AMDGPU instruction behind a sleep "
        "(`__builtin_amdgcn_s_sleep(n)`) waits about 64·n clock cycles, and its argument must "
        "be a constant."
    ),
    example="while (atomicAdd(flag, 0) == 0) __nanosleep(100);\n",
    instead="while (atomicAdd(flag, 0) == 0) __builtin_amdgcn_s_sleep(2);\n",
    fix="Use `__builtin_amdgcn_s_sleep` with a constant, or drop the back-off.",
    mechanical=False,
    references=(AMDGPU_BUILTINS,),
    needles=("__nanosleep",),
)


def nanosleep(src: KernelSource) -> Iterator[Finding]:
    """Calls of ``__nanosleep``."""
    for m, _ in names_once_per_line(src, _NANOSLEEP_RE, NANOSLEEP.needles):
        yield src.finding(
            NANOSLEEP,
            m.start(),
            m.end(),
            message="__nanosleep: use __builtin_amdgcn_s_sleep(n) (about 64·n clock cycles) on AMD",
        )


_GRAPH_NAME_ANCHORS = ("cudaGraph", "cudaConditional", "DeviceUpdatable")

GRAPH_FEATURES = rule(
    id="GP322",
    slug="cuda-graph-unsupported-feature",
    category=Category.KERNELS,
    severity=Severity.MEDIUM,
    confidence=Confidence.HIGH,
    summary="A CUDA graph feature without a HIP counterpart (conditional nodes, device launch)",
    what=(
        "Finds conditional graph nodes (`cudaGraphConditionalHandleCreate`, "
        "`cudaGraphCondType*`), device-side graph launch (`cudaGraphInstantiateFlagDeviceLaunch`, "
        "`cudaGraphDeviceNode_t`) and device-updatable kernel nodes. Ordinary graphs and stream "
        "capture are supported by HIP (`hipGraph*`) and are only counted by GP300."
    ),
    why=(
        "HIP graphs cover capture, explicit construction, instantiation, update and launch, but "
        "HIPIFY's support tables list no HIP counterpart for these newer CUDA 12 features."
    ),
    example="cudaGraphConditionalHandleCreate(&handle, graph, 1, cudaGraphCondAssignDefault);\n",
    instead="// decide on the host between launches of separately instantiated graphs\n",
    fix="Move the condition or the launch to the host, or keep the feature on the NVIDIA path.",
    mechanical=False,
    references=(HIP_GRAPHS, HIPIFY_APIS),
    needles=_GRAPH_NAME_ANCHORS,
)


def cuda_graph_unsupported_feature(src: KernelSource) -> Iterator[Finding]:
    """Conditional graph nodes, device-side graph launch and device-updatable kernel nodes."""
    for m, name in names_once_per_line(
        src, kernel_apis()["graph-features"].pattern, _GRAPH_NAME_ANCHORS
    ):
        yield src.finding(
            GRAPH_FEATURES,
            m.start(),
            m.end(),
            message=f"{name}: this CUDA graph feature has no HIP counterpart",
        )


_CUDA_ARCH_RE = re.compile(r"__CUDA_ARCH\w*")
_DIRECTIVE_HEAD_RE = re.compile(r"^#\s*(?:if|ifdef|ifndef|elif|elifdef|elifndef)\b")
_VERSION_CHECK_RE = re.compile(
    r"__CUDA_ARCH__\s*(?:[<>]=?|[!=]=)\s*\d|\d\s*(?:[<>]=?|[!=]=)\s*__CUDA_ARCH__"
)

CUDA_ARCH_MACRO = rule(
    id="GP324",
    slug="cuda-arch-macro",
    category=Category.KERNELS,
    severity=Severity.MEDIUM,
    confidence=Confidence.HIGH,
    summary="__CUDA_ARCH__ is never defined by HIP-Clang",
    what=(
        "Finds preprocessor conditions that test `__CUDA_ARCH__` (and `__CUDA_ARCH_FEAT_*`). "
        "A test is left out when the branch AMD takes is one an NVIDIA GPU compiles too and "
        "it runs: working code (the Volta/Turing path of a `>= 800` fast path, the modern "
        "path of a `< 700` workaround), or nothing where a current NVIDIA GPU also compiles "
        "nothing (a Hopper-only body), or the same code with 0 for the architecture (a test that "
        "only records `__CUDA_ARCH__`, whose host branch says 'no NVIDIA arch'). Fallbacks that trap (`assert(false)`, `__trap()`, "
        "`#error`), device-pass tests (`#ifdef __CUDA_ARCH__`) and NVCC's feature calls "
        "(`__CUDA_ARCH_HAS_FEATURE__(...)`) are always reported."
    ),
    why=(
        "HIP-Clang does not define `__CUDA_ARCH__`. `#ifdef __CUDA_ARCH__` device branches "
        "disappear on AMD (the host branch is compiled for the device instead), and "
        "`__CUDA_ARCH__ >= 800` feature checks always take the fallback path."
    ),
    example="#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800\n",
    instead="#if defined(__HIP_DEVICE_COMPILE__)   // device pass; features: __HIP_ARCH_HAS_*__ or __gfx942__\n",
    fix=(
        "Test `__HIP_DEVICE_COMPILE__` for 'compiling device code', and feature macros "
        "(`__HIP_ARCH_HAS_*__`) or target macros (`__gfx90a__`, `__gfx942__`) for hardware "
        "features."
    ),
    mechanical=False,
    references=(HIP_PORTING_GUIDE,),
    needles=("__CUDA_ARCH",),
)


def cuda_arch_macro(src: KernelSource) -> Iterator[Finding]:
    """``__CUDA_ARCH__`` (and ``__CUDA_ARCH_FEAT_*``) in conditions and code."""
    code = src.code
    if not src.mentions(CUDA_ARCH_MACRO):
        return
    # One finding per distinct directive condition: TransformerEngine's ptx.cuh repeats
    # `#if (defined __CUDA_ARCH__) && (__CUDA_ARCH__ >= 1000)` 39 times, one decision (what the
    # AMD build takes there) that a finding per line only repeats.
    directives: dict[str, tuple[re.Match[str], str, list[int]]] = {}
    for m in src.once_per_line(words(_CUDA_ARCH_RE, code)):
        line_start = code.rfind("\n", 0, m.start()) + 1
        line_end = code.find("\n", m.end())
        line = code[line_start : line_end if line_end >= 0 else len(code)]
        if names_rocm_macro(line, src.facts.rocm_macros):
            continue  # already written for both compilers: `|| defined(USE_ROCM)`
        name = m.group()
        if not line.lstrip().startswith("#"):
            message = (
                f"{name} used in code: HIP-Clang never defines it; use "
                "__HIP_DEVICE_COMPILE__ or the __gfx*__ target macros instead"
            )
            yield src.finding(CUDA_ARCH_MACRO, m.start(), m.end(), message=message)
            continue
        directive = line_start + len(line) - len(line.lstrip())
        if rocm_fallback_is_sound(code, src.text, directive, src.facts.rocm_macros):
            continue  # AMD takes a path an NVIDIA GPU takes too, and it is working code
        called = code.startswith("(", m.end()) and bool(_DIRECTIVE_HEAD_RE.match(line.lstrip()))
        if name != "__CUDA_ARCH__" and called:
            # `#if __CUDA_ARCH_HAS_FEATURE__(SM90_ALL)`: HIP-Clang stops at the undefined
            # function-like macro whatever its argument, and one fallback definition fixes every
            # test of it, so the tests of one file are one finding, whatever they select.
            message = (
                f"{name}(...) is an NVIDIA feature macro HIP-Clang never defines: an #if on it "
                f"is a preprocessor error there; define a fallback once (#ifndef {name} / "
                f"#define {name}(x) 0)"
            )
        elif name != "__CUDA_ARCH__":
            message = f"{name} is an NVIDIA architecture feature macro; HIP-Clang never defines it"
        elif _VERSION_CHECK_RE.search(line):
            message = (
                "__CUDA_ARCH__ version check: HIP-Clang never defines __CUDA_ARCH__, so AMD "
                "builds always take the fallback; test __HIP_ARCH_HAS_*__ or __gfx*__ macros"
            )
        else:
            message = (
                "__CUDA_ARCH__ as a device-pass test: HIP-Clang never defines it, so AMD device "
                "code takes the host branch here; test __HIP_DEVICE_COMPILE__ as well"
            )
        condition = (
            f"{name}()"
            if name != "__CUDA_ARCH__" and called
            else " ".join(_DIRECTIVE_HEAD_RE.sub("", line.strip()).split())
        )
        found = directives.get(condition)
        if found is None:
            directives[condition] = (m, message, [])
        else:
            found[2].append(src.line_of(m.start()))
    for m, message, more in directives.values():
        if more:
            shown = ", ".join(map(str, more[:8])) + (", …" if len(more) > 8 else "")
            message += f" ({len(more)} more line{'s' if len(more) > 1 else ''} with this "
            message += f"{'macro' if message.startswith(m.group() + '(') else 'condition'}: "
            message += f"{shown})"
        yield src.finding(CUDA_ARCH_MACRO, m.start(), m.end(), message=message)


_DEVICE_QUALIFIER_RE = re.compile(r"__(?:global|device)__\b")
_LAUNCH_RE = re.compile(r"<<<")

DYNAMIC_PARALLELISM = rule(
    id="GP325",
    slug="dynamic-parallelism",
    category=Category.KERNELS,
    severity=Severity.HIGH,
    confidence=Confidence.MEDIUM,
    summary="A kernel is launched from device code; HIP has no dynamic parallelism",
    what="Finds `<<<...>>>` launches inside `__global__` or `__device__` function bodies.",
    why=(
        "CUDA dynamic parallelism lets a kernel launch kernels. HIP does not support it, so "
        "device-side launches do not compile."
    ),
    example="__global__ void parent() { child<<<1, 64>>>(); }\n",
    instead="parent<<<g, b>>>();\nchild<<<1, 64>>>();   // launched from the host, in stream order\n",
    fix=(
        "Move the launch to the host (or flatten the work into the parent kernel); HIP "
        "graphs can order dependent launches."
    ),
    mechanical=False,
    references=(HIP_EXTENSIONS,),
    needles=("<<<",),
)


def dynamic_parallelism(src: KernelSource) -> Iterator[Finding]:
    """``<<<...>>>`` launches inside the bodies of ``__global__`` or ``__device__`` functions."""
    code = src.code
    if not src.mentions(DYNAMIC_PARALLELISM):
        return
    if "__global__" not in code and "__device__" not in code:
        return

    def device_only(m: re.Match[str], brace: int) -> bool:
        # __host__ __device__: launches there are usually host-only paths
        decl_start = max(code.rfind(";", 0, m.start()), code.rfind("}", 0, m.start()))
        decl_start = max(decl_start, code.rfind("{", 0, m.start()))
        return "__host__" not in code[decl_start + 1 : brace]

    bodies = [
        (brace, close)
        for _m, brace, close in function_bodies(
            code, src.brackets, _DEVICE_QUALIFIER_RE, device_only
        )
    ]
    if not bodies:
        return
    starts = [b[0] for b in bodies]
    for m in _LAUNCH_RE.finditer(code):
        index = bisect.bisect_right(starts, m.start()) - 1
        if index >= 0 and bodies[index][0] < m.start() < bodies[index][1]:
            yield src.finding(
                DYNAMIC_PARALLELISM,
                m.start(),
                m.end(),
                message="kernel launched from device code (dynamic parallelism); HIP does not "
                "support it — launch from the host",
            )
