"""The CUDA names ``gpuport port`` renames to HIP (GP300): the rule, then its check, counted once per file."""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Iterator
from importlib import resources

from gpuport.findings import Category, Confidence, Finding, Fix, Severity
from gpuport.kb.kernels import kernel_apis
from gpuport.rules import rule
from gpuport.scan.kernels.references import HIP_PORTING_GUIDE, HIPIFY_APIS
from gpuport.scan.kernels.source import KernelSource
from gpuport.scan.kernels.summaries import top
from gpuport.scan.kernels.words import words

_API_RE = re.compile(
    r"(?:"
    r"(cuda[A-Z]\w*)"
    r"|(cu[A-Z][A-Za-z0-9_]*|CU[a-z]\w*|CU_[A-Z0-9_]+|CUDA_SUCCESS|CUDA_ERROR_\w+)"
    r"|(cublas(?!Lt)[A-Z]\w*|CUBLAS_(?!LT)[A-Z]\w*)"
    r"|(curand[A-Z_]\w*|CURAND_[A-Z]\w*)"
    r"|(cufft[A-Z]\w*|CUFFT_[A-Z]\w*)"
    r"|(cusparse[A-Z]\w*|CUSPARSE_[A-Z]\w*)"
    r"|(cusolver[A-Z]\w*|CUSOLVER_[A-Z]\w*)"
    r"|(cub::\w+)"
    r")"
)
_API_CANDIDATE_RE = re.compile(r"(?:cu|CU)(?:b::)?\w*")
_API_FAMILIES = ("runtime", "driver", "cuBLAS", "cuRAND", "cuFFT", "cuSPARSE", "cuSOLVER", "CUB")
# Names with their own rule, or with no HIP counterpart in HIPIFY's tables: not a rename.
_NOT_RENAMED = "not-renamed"  # kernel_apis()[...].pattern, looked up on first use
_HELPER_MACRO_RE = re.compile(r"#[ \t]*define[ \t]+((?:cu|CU)\w+)")
_HELPER_FUNCTION_RE = re.compile(
    r"((?:cu|CU)\w+)\s*\([^;{}()]*\)\s*(?:const\s*)?(?:noexcept\s*)?\{"
)
_RETURN_TYPE_BEFORE_RE = re.compile(
    r"(?:void|int|bool|unsigned|auto|inline|static|cudaError_t|CUresult|size_t|float|double)"
    r"\s*[*&]?\s*$"
)
_RENAMED_HEADERS = "renamed-headers"
# The runtime and driver families are counted only for names HIPIFY's table (or gpuport's
# extras) knows: a project's own identifier that merely starts with `cuda`/`cu` (a class
# `cudaDevicePropertiesManager`, a helper `cuCheck`) is not CUDA API, and `port` leaves it.
_KB_PACKAGE = "gpuport.kb"
_API_TABLE = "cuda_hip_api.tsv"  # generated from ROCm/HIPIFY docs/tables (port/apimap.py)
_API_EXTRAS = "cuda_hip_extra.toml"
_EXTRA_NAME_RE = re.compile(r'^cuda = "(\w+)"$', re.MULTILINE)
_TABLE_CHECKED_FAMILIES = frozenset({1, 2})  # _API_RE groups: runtime, driver
# A PyTorch C++/CUDA extension (it includes torch's, ATen's or c10's headers):
# torch.utils.cpp_extension runs torch's own hipify over its sources when it builds for ROCm,
# renaming these names itself (https://pytorch.org/docs/stable/cpp_extension.html, "ROCm").
_TORCH_EXTENSION_HEADER_RE = re.compile(r"(?:torch|ATen|c10)/")


@functools.cache
def known_cuda_names() -> frozenset[str]:
    """Every CUDA name of the API map (kb/cuda_hip_api.tsv's first column and the extras'
    names), read as text: the scan needs only the names, not port's parsed entries."""
    kb = resources.files(_KB_PACKAGE)
    table = kb.joinpath(_API_TABLE).read_text(encoding="utf-8")
    names = {line.partition("\t")[0] for line in table.splitlines() if line and line[0] != "#"}
    names.update(_EXTRA_NAME_RE.findall(kb.joinpath(_API_EXTRAS).read_text(encoding="utf-8")))
    return frozenset(names)


CUDA_API_RENAMES = rule(
    id="GP300",
    slug="cuda-api-renames",
    category=Category.KERNELS,
    severity=Severity.LOW,
    confidence=Confidence.HIGH,
    summary="CUDA runtime, driver or library API references that gpuport port renames to HIP",
    what=(
        "Counts, once per file, the CUDA runtime (`cuda*`), driver (`cu*`, `CU*`) and library "
        "(cuBLAS, cuRAND, cuFFT, cuSPARSE, cuSOLVER, CUB) identifiers and CUDA headers that "
        "have a one-to-one HIP counterpart, and lists the most frequent ones. Runtime and driver "
        "names count only when HIPIFY's tables know them: a project's own identifier that "
        "starts with `cuda` (a class `cudaDevicePropertiesManager`) is not CUDA API. APIs with their "
        "own rule (cuDNN, cuBLASLt, NVRTC, NVTX, texture references, clusters, TMA) are not "
        "counted here. In a project that builds its extensions through "
        "torch.utils.cpp_extension (CUDAExtension, load()), the scan sets these findings aside "
        "(outside folders a CMake build compiles as CUDA): torch's hipify renames the names "
        "when it builds on a ROCm PyTorch. In a project whose build files build its torch "
        "extensions only as `CppExtension` (which torch does not hipify), a file that includes "
        "torch's headers gets the plain finding, saying so."
    ),
    why=(
        "None of these names exist on ROCm, so the file does not build until they are renamed "
        "(`cudaMalloc` → `hipMalloc`, `cublasSgemm` → `hipblasSgemm`, `cuda_runtime.h` → "
        "`hip/hip_runtime.h`). The rename is mechanical, which is why this finding is low: "
        "it exists so that an assessment can count the mechanical part of the work."
    ),
    example=(
        "#include <cuda_runtime.h>\n"
        "cudaMalloc(&p, n);\n"
        "cudaMemcpy(p, h, n, cudaMemcpyHostToDevice);\n"
    ),
    instead=(
        "#include <hip/hip_runtime.h>\nhipMalloc(&p, n);\nhipMemcpy(p, h, n, hipMemcpyHostToDevice);\n"
    ),
    fix="Run `gpuport port`: it renames every counted reference to its HIP equivalent.",
    mechanical=True,
    references=(HIPIFY_APIS, HIP_PORTING_GUIDE),
    needles=("cu", "CU"),
)


def cuda_api_renames(src: KernelSource) -> Iterator[Finding]:
    """CUDA runtime, driver and library names and headers with a HIP twin, counted per family."""
    if not src.mentions(CUDA_API_RENAMES):
        return
    code = src.body
    # cu* names the project defines itself (macros and helper functions) are its own
    user_defined = {m.group(1) for m in _HELPER_MACRO_RE.finditer(src.code)}
    for helper in words(_HELPER_FUNCTION_RE, src.code):
        if _RETURN_TYPE_BEFORE_RE.search(src.code, max(0, helper.start() - 40), helper.start()):
            user_defined.add(helper.group(1))
    families: dict[str, Counter[str]] = {}
    first: int | None = None
    found = src.conditions  # None: no #if in the file, everything is compiled
    not_renamed = kernel_apis()[_NOT_RENAMED].pattern
    known = known_cuda_names()
    for candidate in words(_API_CANDIDATE_RE, code, also=".>"):
        m = _API_RE.fullmatch(candidate.group())
        index = m.lastindex if m is not None else None
        if m is None or index is None or (found is not None and found.is_dead(candidate.start())):
            continue
        name = m.group(index)
        if name in user_defined or not_renamed.match(name):
            continue
        if index in _TABLE_CHECKED_FAMILIES and name not in known:
            continue  # the project's own `cuda…` identifier, not CUDA API
        families.setdefault(_API_FAMILIES[index - 1], Counter())[name] += 1
        if first is None:
            first = candidate.start()
    headers: Counter[str] = Counter()
    renamed_header = kernel_apis()[_RENAMED_HEADERS].pattern
    for header, offset in src.includes:
        if renamed_header.match(header) and src.compiled_on_rocm(offset):
            headers[header] += 1
            first = offset if first is None else min(first, offset)
    if first is None:
        return
    total = sum(sum(c.values()) for c in families.values()) + sum(headers.values())
    parts = [
        f"{family} {sum(families[family].values())} ({top(families[family])})"
        for family in _API_FAMILIES
        if family in families
    ]
    if headers:
        parts.append(f"headers {sum(headers.values())} ({top(headers)})")
    references = f"{total} CUDA API reference{'s' if total != 1 else ''}"
    if any(_TORCH_EXTENSION_HEADER_RE.match(header) for header, _ in src.includes):
        yield src.finding(
            CUDA_API_RENAMES,
            first,
            message=f"{references} in a PyTorch extension, which torch's own hipify renames "
            f"when torch.utils.cpp_extension builds it for ROCm: {'; '.join(parts)}",
            fix=Fix(
                "Nothing to do by hand: build the extension with a ROCm build of PyTorch "
                "(torch.utils.cpp_extension hipifies its sources), or run `gpuport port`.",
                mechanical=True,
            ),
            severity=Severity.INFO,
        )
        return
    yield src.finding(
        CUDA_API_RENAMES,
        first,
        message=f"{references} that gpuport port renames to HIP: {'; '.join(parts)}",
        fix=Fix(CUDA_API_RENAMES.fix, mechanical=True),
    )
