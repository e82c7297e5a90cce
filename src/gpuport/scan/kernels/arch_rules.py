"""A kernel file built around Blackwell-only hardware (GP330): the rule, then its check.

Blackwell's fifth-generation tensor cores (``tcgen05`` PTX, CuTe's UMMA and SM100 MMA/TMEM
atoms, CUTLASS's sm100 pipelines) compute out of tensor memory, which no AMD GPU has. A file
that uses them is one kernel design, not a list of lines to port: the rule fires once per file,
and the scan's triage sets the file's other findings aside under it (project/triage.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from gpuport.findings import Category, Confidence, Finding, Severity
from gpuport.rules import rule
from gpuport.scan.kernels.references import COMPOSABLE_KERNEL, HIPBLASLT
from gpuport.scan.kernels.source import KernelSource

# CuTe/CUTLASS names of the sm_100/sm_120 tensor-core path: UMMA (the tcgen05 MMA), its tensor
# memory (TMEM) and the pipelines built on it, and the SM100/SM120 MMA and TMEM atoms.
_BLACKWELL_NAMES_RE = re.compile(
    r"\b(?:UMMA::\w+|SM1[02]\d_(?:MMA|TMEM|UMMA)\w*|umma_arrive\w*|TmemAllocator\w*"
    r"|Pipeline(?:Tma)?Umma\w*|tcgen05_\w+)"
)
_BLACKWELL_ANCHORS = ("UMMA", "umma", "Umma", "TMEM", "Tmem", "tcgen05")
# Headers of CUTLASS/CuTe's sm_100 family: cutlass/pipeline/sm100_pipeline.hpp,
# cute/atom/mma_traits_sm100.hpp, cute/arch/mma_sm100_umma.hpp.
_BLACKWELL_HEADER_RE = re.compile(r"(?:^|[/_])sm1[02]\d(?:[a-z]|_|\.)")

BLACKWELL_ONLY_KERNEL = rule(
    id="GP330",
    slug="blackwell-only-kernel",
    category=Category.KERNELS,
    severity=Severity.HIGH,
    confidence=Confidence.MEDIUM,
    summary="A kernel file built on Blackwell's tensor memory and tcgen05 MMA, which AMD GPUs lack",
    what=(
        "Fires once per file at the first use of Blackwell's fifth-generation tensor cores: "
        "`tcgen05.*` PTX, CuTe's UMMA and SM100/SM120 MMA or TMEM atoms, CUTLASS's sm100 "
        "pipelines (`PipelineTmaUmmaAsync`, `umma_arrive`) or an sm100 CUTLASS/CuTe header. "
        "The scan sets the file's other findings aside under this one: they are part of the "
        "same decision."
    ),
    why=(
        "These instructions read and write tensor memory (TMEM), a Blackwell-only store next "
        "to the tensor cores; AMD GPUs have matrix cores (MFMA) fed from registers and no "
        "tensor memory, so the kernel cannot be translated line by line. A port writes an AMD "
        "kernel for the operation (CK, hipBLASLt) or leaves the operation out on ROCm."
    ),
    example=(
        "#include <cutlass/pipeline/sm100_pipeline.hpp>\n"
        "using Mma = cute::SM100_MMA_F16BF16_SS<half_t, half_t, float, 128, 256,\n"
        "    cute::UMMA::Major::K, cute::UMMA::Major::K>;\n"
    ),
    instead=(
        "// an AMD kernel for the same operation (composable_kernel, hipBLASLt), chosen by\n"
        "// the build on ROCm; the Blackwell file stays NVIDIA-only\n"
    ),
    fix=(
        "Decide once for the file: write or take an AMD kernel for its operation "
        "(composable_kernel, hipBLASLt), or leave the operation out of the ROCm build."
    ),
    mechanical=False,
    references=(COMPOSABLE_KERNEL, HIPBLASLT),
    needles=("asm", *_BLACKWELL_ANCHORS, "sm10", "sm11", "sm12"),
)


def blackwell_only_kernel(src: KernelSource) -> Iterator[Finding]:
    """The first Blackwell tensor-memory use of the file (an include, a name or tcgen05 PTX)."""
    first: tuple[int, int, str] | None = None  # (start, end, what)
    for header, offset in src.includes:
        if _BLACKWELL_HEADER_RE.search(header) and src.compiled_on_rocm(offset):
            first = (offset, offset, f"includes {header}")
            break
    code = src.code
    for m in _BLACKWELL_NAMES_RE.finditer(code):
        if first is not None and m.start() >= first[0]:
            break
        if src.compiled_on_rocm(m.start()) and not _on_directive(code, m.start()):
            first = (m.start(), m.end(), f"uses {m.group()}")
            break
    for statement in src.asm:
        if first is not None and statement.start >= first[0]:
            break
        ptx = statement.ptx
        if (
            ptx is not None
            and any(op.startswith("tcgen05") for op in ptx.opcodes)
            and src.compiled_on_rocm(statement.start)
        ):
            first = (statement.start, statement.end, f"uses {ptx.shown()} PTX")
            break
    if first is None:
        return
    start, end, what = first
    message = (
        f"this file is built on Blackwell's tensor memory and tcgen05 MMA ({what}), which no AMD "
        "GPU has: write or take an AMD kernel for its operation, or leave it out on ROCm"
    )
    yield src.finding(BLACKWELL_ONLY_KERNEL, start, end if end > start else None, message=message)


def _on_directive(code: str, pos: int) -> bool:
    """Is ``pos`` on a preprocessor line (an arch test names SM100 without using it)?"""
    line_start = code.rfind("\n", 0, pos) + 1
    return code[line_start:pos].lstrip().startswith("#")
