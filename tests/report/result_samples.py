"""Hand-made port results, plans, knowledge-base listings and rule pages for the report tests.

Nothing here runs a stage or reads gpuport's data files: every figure is written out, so the
goldens change only when a renderer does. Paths are relative and nothing reads the clock.
"""

from __future__ import annotations

import datetime
from dataclasses import replace

from report_samples import IMG, INLINE_PTX, MD_LINK, RULES, SCRIPT, STYLE_BREAK, TEMPLATE

from gpuport import kb
from gpuport.edits import ChangeStatus
from gpuport.kb.query import KbCounts, KbLookup, KbMatch, KbTable
from gpuport.plan.catalog import Gpu, Interconnect
from gpuport.plan.memory import MemoryBreakdown
from gpuport.plan.model_spec import ModelSpec, ParamCount, Published
from gpuport.plan.planner import PlanEntry, PlanRequest, PlanResult, range_sentence
from gpuport.plan.precision import KvDtype, Precision
from gpuport.plan.prices import Price
from gpuport.plan.speed import DecodeEstimate, PrefillEstimate, Rates, StepTime, Uncertainty
from gpuport.port.model import Change, CheckStatus, CompileCheck, FileResult, PortResult
from gpuport.rules import Rule, RuleIndex

CHECKED = datetime.date(2026, 1, 15)
GB = 1e9

# --- port ------------------------------------------------------------------------------------

_KERNEL = "#include <cuda_runtime.h>\nvoid f() { cudaFree(0); }\n"
_KERNEL_HIP = "#include <hip/hip_runtime.h>\nvoid f() { hipFree(0); }\n"
_ARCH = "__global__ void k(int* o) {\n#if __CUDA_ARCH__ >= 800\n  o[0] = 1;\n#endif\n}\n"
_WARP = "unsigned m = __ballot_sync(0xffffffff, x);\n"
_DOCKERFILE = "FROM nvidia/cuda:12.4.1-devel-ubuntu22.04\nENV NVIDIA_VISIBLE_DEVICES=all\n"


def sample_port() -> PortResult:
    """A port with every status, a renamed file, a skipped file, checks and a problem."""
    files = [
        FileResult(
            path="csrc/ops.cu",
            new_path="csrc/ops.cu",
            kind="cuda",
            original=_KERNEL,
            translated=_KERNEL_HIP,
            changes=[
                Change(
                    1, 10, "header", "cuda_runtime.h", "hip/hip_runtime.h", ChangeStatus.CONVERTED
                ),
                Change(2, 12, "runtime", "cudaFree", "hipFree", ChangeStatus.CONVERTED),
            ],
        ),
        FileResult(
            path="csrc/arch.cu",
            new_path="csrc/arch.cu",
            kind="cuda",
            original=_ARCH,
            translated=_ARCH,
            changes=[
                Change(
                    2,
                    5,
                    "arch",
                    "__CUDA_ARCH__ >= 800",
                    "__CUDA_ARCH__ >= 800",
                    ChangeStatus.UNCONVERTED,
                    note="compute capabilities mean nothing on AMD GPUs: test a HIP feature "
                    "macro instead",
                    rule_id="GP305",
                ),
            ],
        ),
        FileResult(
            path="csrc/warp.cuh",
            new_path="csrc/warp.hip.h",
            kind="cxx",
            original=_WARP,
            translated=_WARP.replace("__ballot_sync(0xffffffff, x)", "__ballot(x)"),
            changes=[
                Change(
                    1,
                    14,
                    "warp",
                    "__ballot_sync(0xffffffff, x)",
                    "__ballot(x)",
                    ChangeStatus.NEEDS_REVIEW,
                    note="the mask is 64 bits wide on a wave64 GPU | check `m`'s type",
                    rule_id="GP303",
                ),
            ],
        ),
        FileResult(
            path="docker/Dockerfile",
            new_path="docker/Dockerfile",
            kind="dockerfile",
            original=_DOCKERFILE,
            translated=None,
            changes=[
                Change(
                    2,
                    0,
                    "container-env",
                    "ENV NVIDIA_VISIBLE_DEVICES=all",
                    "ENV NVIDIA_VISIBLE_DEVICES=all",
                    ChangeStatus.UNCONVERTED,
                    note="set HIP_VISIBLE_DEVICES by hand",
                ),
            ],
        ),
        FileResult(
            path="third_party/blob.cu",
            new_path="third_party/blob.cu",
            kind="cuda",
            original="",
            translated=None,
            skipped="binary file",
        ),
    ]
    checks = [
        CompileCheck("csrc/ops.cu", CheckStatus.BOTH_COMPILE),
        CompileCheck(
            "csrc/arch.cu",
            CheckStatus.TRANSLATION_FAILS,
            translation_error="arch.cu:2:5: error: '__CUDA_ARCH__' is not defined",
        ),
        CompileCheck(
            "csrc/warp.cuh", CheckStatus.NOT_COMPILED, detail="a header is not compiled alone"
        ),
    ]
    problems = ["requirements.txt:3: a requirement that does not parse: torch==="]
    notes = ["translating for ROCm 6.4, the release of the hipcc that --check compiles with"]
    return PortResult("proj", "6.4", files, checks, problems, notes)


# Text a hostile project can put in a port: markup for every medium and bytes that drive a
# terminal (title, clear screen, a link, bidi reordering, C1 controls, undecodable bytes).
TERMINAL_ATTACKS = "\x1b]0;title\x07 \x1b[2J \x1b]8;;https://evil.example\x1b\\link\x1b]8;;\x1b\\"
HOSTILE_CONTROLS = f"{TERMINAL_ATTACKS} \u202eevil \x85 \x9b31m bad\udcff | `tick`"
HOSTILE_PORT_TEXT = f"{SCRIPT} {IMG} {MD_LINK} {STYLE_BREAK} {TEMPLATE} https://evil.example"


def hostile_port() -> PortResult:
    """A port whose paths, code, notes, checks and problems try markup and escape codes."""
    path = f"src/{SCRIPT}{HOSTILE_CONTROLS}.cu"
    before = f"cudaFree(0); // {HOSTILE_PORT_TEXT} {HOSTILE_CONTROLS}\n"
    change = Change(
        1,
        1,
        f"fam{SCRIPT}",
        before,
        before.replace("cudaFree", "hipFree"),
        ChangeStatus.NEEDS_REVIEW,
        note=f"note {HOSTILE_PORT_TEXT} {HOSTILE_CONTROLS}",
        rule_id="GP399",
    )
    files = [
        FileResult(path, path, "cuda", before, change.after, [change]),
        FileResult(f"bin/{IMG}", f"bin/{IMG}", "cuda", "", None, skipped=f"binary {SCRIPT}"),
    ]
    checks = [CompileCheck(path, CheckStatus.TRANSLATION_FAILS, translation_error=before)]
    problems = [f"requirements.txt:1: -r {HOSTILE_PORT_TEXT} {HOSTILE_CONTROLS}"]
    return PortResult(f"root{SCRIPT}", "6.4", files, checks, problems)


# --- plan ------------------------------------------------------------------------------------

_BF16 = Precision("bf16", 16.0, "fp16", "all", "the checkpoint's torch_dtype")
_KV_BF16 = KvDtype("bf16", 2.0, "default")
_MODEL = ModelSpec(
    name="llama-like-8b",
    source="models/llama-like-8b/config.json",
    family="llama",
    hidden_size=4096,
    num_layers=32,
    vocab_size=128256,
    num_heads=32,
    num_kv_heads=8,
    head_dim=128,
    intermediate_size=14336,
    params=ParamCount(
        embedding=525_336_576,
        lm_head=525_336_576,
        attention=1_342_177_280,
        dense_mlp=5_637_144_576,
        experts=0,
        shared=0,
        norms=266_240,
        other=0,
        active_experts=0,
    ),
    layer_windows=(0,) * 32,
    max_context=131072,
    published=Published(8.03e9, None, "https://example.org/llama-like-8b"),
)
_REQUEST = PlanRequest(_BF16, _KV_BF16, context=8192, batch=16)


def _gpu(gpu_id: str, name: str, short: str, vendor: str, memory: float, bw: float) -> Gpu:
    return Gpu(
        id=gpu_id,
        aliases=(),
        name=name,
        short=short,
        vendor=vendor,
        segment="datacenter",
        architecture="CDNA3" if vendor == "amd" else "Hopper",
        arch_id="gfx942" if vendor == "amd" else "sm_90",
        memory_gib=memory,
        usable_gib=memory,
        mem_bw_gbs=bw,
        fp16_tflops=1000.0,
        fp8_tflops=2000.0,
        int8_tops=2000.0,
        tdp_w=700.0,
        interconnect=Interconnect("xgmi-mesh" if vendor == "amd" else "nvlink", 64.0, 7),
        devices_per_package=1,
        compute_efficiency=None,
        sources={"memory": f"https://example.org/{gpu_id}"},
        status={"memory": "vendor"},
        seen_in="a hand-made sample",
        checked=CHECKED,
    )


_BIG_AMD = _gpu("big-amd", "Big AMD GPU", "BigAMD", "amd", 192.0, 5300.0)
_NVIDIA = _gpu("nv-80", "NVIDIA 80 GB", "NV80", "nvidia", 80.0, 3350.0)
_SMALL = _gpu("tiny-24", "Tiny 24 GB <card>", "Tiny24", "nvidia", 24.0, 1000.0)


def _price(dollars: float, gpu: Gpu) -> Price:
    return Price(
        dollars, "on-demand", "ExampleCloud", f"https://example.org/prices/{gpu.id}", CHECKED
    )


def _step(memory_ms: float, compute_ms: float, communication_ms: float = 0.0) -> StepTime:
    return StepTime(memory_ms / 1e3, compute_ms / 1e3, communication_ms / 1e3, 1)


# The validation behind a range; the NV80 entry has none (measured rates), as happens.
_UNCERTAINTY = Uncertainty(
    0.82,
    1.12,
    0.14,
    "vLLM on AMD datacenter GPUs, decode: 30 measurements on 2 GPUs, leave-one-GPU-out",
)
_RANGED_DECODE = DecodeEstimate(1480.5, 92.53, _step(10.2, 3.1), 180, 420, _UNCERTAINTY)


def sample_plan() -> PlanResult:
    """Two GPUs that fit (one on two devices) and one that does not, with reasons."""
    fits_one = PlanEntry(
        gpu=_BIG_AMD,
        fits=True,
        tp=1,
        pp=1,
        memory=MemoryBreakdown(206.2 * GB, 185.6 * GB, 16.1 * GB, 17.2 * GB, 2.1 * GB, 3.0 * GB),
        max_sequences=152,
        max_context=131072,
        rates=Rates(4240.0, 780.0, 448.0, 5.0, False, "datasheet x efficiency"),
        decode=_RANGED_DECODE,
        prefill=PrefillEstimate(24150.0, _step(12.0, 84.8), 8192, _UNCERTAINTY),
        price=_price(2.5, _BIG_AMD),
        reasons=(
            "fits on one device with 152 sequences of room",
            "memory-bound decode",
            f"decode {range_sentence(_RANGED_DECODE)}",
        ),
        engine="vllm",
        batch=16,
        context=8192,
        rank=1,
    )
    fits_two = PlanEntry(
        gpu=_NVIDIA,
        fits=True,
        tp=2,
        pp=1,
        memory=MemoryBreakdown(85.9 * GB, 77.3 * GB, 8.0 * GB, 8.6 * GB, 1.1 * GB, 2.5 * GB),
        max_sequences=118,
        max_context=65536,
        rates=Rates(2680.0, 700.0, 450.0, 3.0, True, "measured"),
        decode=DecodeEstimate(1802.0, 112.6, _step(6.1, 2.4, 0.9), None, 300),
        prefill=PrefillEstimate(30100.0, _step(8.0, 60.1, 4.0), 8192),
        price=_price(3.0, _NVIDIA),
        reasons=("two devices: the KV cache of 16 sequences does not fit in one",),
        engine="vllm",
        batch=16,
        context=8192,
        rank=2,
    )
    does_not_fit = PlanEntry(
        gpu=_SMALL,
        fits=False,
        tp=8,
        pp=1,
        memory=MemoryBreakdown(25.8 * GB, 23.2 * GB, 2.0 * GB, 21.5 * GB, 0.4 * GB, 1.5 * GB),
        max_sequences=0,
        max_context=0,
        rates=Rates(800.0, 400.0, 32.0, 8.0, False, "datasheet x efficiency"),
        decode=None,
        prefill=None,
        price=None,
        reasons=("does not fit in 8 devices: the KV cache alone needs 21.5 GB per device",),
        engine="llama.cpp",
        batch=16,
        context=8192,
        rank=3,
    )
    return PlanResult(
        model=_MODEL,
        request=_REQUEST,
        entries=(fits_one, fits_two, does_not_fit),
        summary=(
            "llama-like-8b: 8.03B parameters, 16.1 GB of bf16 weights",
            "cheapest per token: Big AMD GPU x1 at $0.469 per 1M output tokens",
        ),
        warnings=("Tiny 24 GB <card> has no price on file: pass --price tiny-24=USD",),
        assumptions=("decode is a roofline with stated efficiencies", "prices are on-demand"),
    )


def _at_batch(entry: PlanEntry, batch: int, tokens_per_s: float, cost_scale: float) -> PlanEntry:
    """``entry`` at another batch: decode ``tokens_per_s``, ``cost_scale`` x the step time."""
    decode = entry.decode
    if decode is None:
        return replace(entry, batch=batch)
    step = _step(decode.step.memory_s * 1e3 * cost_scale, decode.step.compute_s * 1e3)
    return replace(
        entry,
        batch=batch,
        decode=replace(
            decode,
            tokens_per_s=tokens_per_s,
            per_sequence_tokens_per_s=tokens_per_s / batch,
            step=step,
        ),
    )


def sample_plan_sweep() -> PlanResult:
    """The sample plan swept over batch 1, 16, 64 at one context, ranked at batch 16: a GPU
    whose count grows with the batch and one that never fits, so the lines have gaps."""
    base = sample_plan()
    big, nvidia, small = base.entries
    sweep = (
        _at_batch(big, 1, 98.0, 0.7),
        big,
        _at_batch(big, 64, 3900.0, 1.6),
        _at_batch(nvidia, 1, 140.0, 0.7),
        nvidia,
        replace(_at_batch(nvidia, 64, 4100.0, 1.7), fits=False, decode=None, prefill=None),
        replace(small, batch=1),
        small,
        replace(small, batch=64),
    )
    request = replace(_REQUEST, batches=(16, 1, 64))
    return replace(
        base,
        request=request,
        sweep=sweep,
        summary=(*base.summary, "Sweep: batch 1, 16, 64 at 8,192 tokens; ranked at batch 16."),
    )


# --- the knowledge base ----------------------------------------------------------------------

_SOURCES = ("https://example.org/kb-source",)
_PACKAGE = kb.Package(
    name="example-kernels",
    import_names=("example_kernels",),
    category="kernels",
    status=kb.PackageStatus.NEEDS_ROCM_BUILD,
    rocm_since="2.0",
    instead="Install the ROCm build from its index. Replace example-kernels[cuda12] with "
    "example-kernels[rocm] (brackets are text, not markup).",
    rocm_index="https://example.org/rocm{rocm}/simple",
    rocm_package=None,
    notes="A hand-made entry.",
    sources=_SOURCES,
    checked=CHECKED,
    confidence="high",
    cuda_extras=("cuda12",),
    rocm_min_version="2.1",
)
_LIBRARY = kb.CudaLibrary(
    name="exBLAS",
    headers=("exblas.h",),
    link_names=("exblas",),
    cmake_targets=("CUDA::exblas",),
    amd_counterpart="hipExBLAS",
    status=kb.LibraryStatus.EQUIVALENT,
    notes="",
    sources=_SOURCES,
    checked=CHECKED,
    amd_headers=("hipexblas/hipexblas.h",),
    amd_link_names=("hipexblas",),
    amd_find_package="hipexblas",
)
_ENV = kb.EnvVar(
    name="EXAMPLE_VISIBLE_DEVICES",
    meaning="Which GPUs a process sees.",
    rocm_equivalent="HIP_VISIBLE_DEVICES",
    notes="",
    sources=_SOURCES,
    checked=CHECKED,
    rocm_names=("HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"),
)
_FLAG = kb.DockerFlag(
    flag="--gpus",
    rocm_replacement="--device=/dev/kfd --device=/dev/dri; compose: devices: [/dev/kfd, /dev/dri]",
    notes="",
    sources=_SOURCES,
    checked=CHECKED,
)
_ARCH_ENTRY = kb.GpuArch(
    gfx="gfx942",
    family="CDNA3",
    products=("Instinct MI300X", "Instinct MI325X"),
    wavefront=64,
    notes="",
    sources=_SOURCES,
    checked=CHECKED,
    wavefronts_supported=(64,),
    officially_supported=True,
    support_note="ROCm 6.4 support matrix",
)


def sample_kb_lookup() -> KbLookup:
    """A name that matched a package by name, a library by header and an environment variable."""
    return KbLookup(
        "example",
        (
            KbMatch("package", "name", _PACKAGE),
            KbMatch("library", "header", _LIBRARY),
            KbMatch("env", "name", _ENV),
            KbMatch("docker-flag", "flag", _FLAG),
            KbMatch("gpu", "gfx id or product", _ARCH_ENTRY),
        ),
        "6.4",
    )


def sample_kb_table() -> KbTable:
    return KbTable("docker", (_FLAG,), "6.4")


def sample_kb_counts() -> KbCounts:
    return KbCounts((("packages", 120), ("libraries", 30), ("env", 41), ("gpus", 12)))


# --- rules -----------------------------------------------------------------------------------


def sample_rule() -> Rule:
    return INLINE_PTX


def sample_rule_index() -> RuleIndex:
    return RuleIndex(tuple(RULES))
