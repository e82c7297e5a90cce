"""Hand-made scan results and assessments for the report tests: no scanner runs here.

The rules are built as ``Rule`` objects without registering them, so these samples never
clash with the real rule table. Paths are relative and nothing depends on the clock.
"""

from __future__ import annotations

import dataclasses

from decision_samples import hostile_recommendation, sample_recommendation

from gpuport.assess.guidance import (
    DOCTOR_STEP,
    ROCM_MACHINE_STEPS,
    ArchCoverage,
    FoldedComponent,
    NextStep,
    RocmSupport,
)
from gpuport.assess.verdict import Assessment, EffortLine, Verdict
from gpuport.findings import (
    Category,
    Confidence,
    Excerpt,
    Finding,
    Fix,
    Location,
    ScanStats,
    Severity,
    SkipKind,
    Skipped,
    Tier,
)
from gpuport.project.model import Evidence
from gpuport.report import Format, RenderOptions, render
from gpuport.rules import Rule
from gpuport.scan.catalog import RuleTable
from gpuport.scan.engine import ScanResult
from gpuport.vcs import ChangedLines

TOOL_VERSION = "9.9.9-test"
SAMPLE_OPTIONS = RenderOptions(tool_version=TOOL_VERSION)


def render_sample(result: object, fmt: Format) -> str:
    """``result`` rendered in ``fmt`` with the samples' fixed tool version."""
    return render(result, fmt, SAMPLE_OPTIONS)


def _rule(
    rule_id: str,
    slug: str,
    category: Category,
    severity: Severity,
    summary: str,
    *,
    mechanical: bool = False,
    confidence: Confidence = Confidence.HIGH,
    references: tuple[str, ...] = (),
) -> Rule:
    return Rule(
        id=rule_id,
        slug=slug,
        category=category,
        severity=severity,
        confidence=confidence,
        summary=summary,
        what=f"Finds places where: {summary.lower()}.",
        why="ROCm does not provide this, so the project fails at build or run time.",
        example="example()",
        instead="instead()",
        fix="Replace it with the ROCm counterpart.",
        mechanical=mechanical,
        references=references,
    )


CUDA_ONLY_PACKAGE = _rule(
    "GP101",
    "cuda-only-package",
    Category.DEPENDENCIES,
    Severity.BLOCKER,
    "Package has no ROCm build",
    references=("https://rocm.docs.amd.com/en/latest/",),
)
CUDA_WHEEL_INDEX = _rule(
    "GP102",
    "cuda-wheel-index",
    Category.DEPENDENCIES,
    Severity.MEDIUM,
    "Pip index serves CUDA wheels",
    mechanical=True,
)
PYNVML_QUERY = _rule(
    "GP201",
    "pynvml-query",
    Category.PYTHON,
    Severity.HIGH,
    "pynvml talks to NVIDIA's management library",
    confidence=Confidence.MEDIUM,
)
CUDA_DEVICE_STRING = _rule(
    "GP202",
    "cuda-device-string",
    Category.PYTHON,
    Severity.INFO,
    "A 'cuda' device string also means the AMD GPU under ROCm",
)
INLINE_PTX = _rule(
    "GP301",
    "inline-ptx",
    Category.KERNELS,
    Severity.HIGH,
    "Inline PTX assembly does not build for AMD GPUs",
)
CUDA_RUNTIME_CALL = _rule(
    "GP302",
    "cuda-runtime-call",
    Category.KERNELS,
    Severity.LOW,
    "CUDA runtime call with a HIP equivalent",
    mechanical=True,
)
CUDA_BASE_IMAGE = _rule(
    "GP401",
    "cuda-base-image",
    Category.CONTAINERS,
    Severity.MEDIUM,
    "Container image is built on CUDA",
    mechanical=True,
)
CMAKE_CUDA_LANGUAGE = _rule(
    "GP501",
    "cmake-cuda-language",
    Category.BUILD,
    Severity.LOW,
    "CMake project enables the CUDA language",
    confidence=Confidence.LOW,
)
NVCC_FLAGS = _rule(  # enabled, but finds nothing in the sample: SARIF still lists it
    "GP502", "nvcc-flags", Category.BUILD, Severity.MEDIUM, "Build passes nvcc-only flags"
)
RULES = [
    CUDA_ONLY_PACKAGE,
    CUDA_WHEEL_INDEX,
    PYNVML_QUERY,
    CUDA_DEVICE_STRING,
    INLINE_PTX,
    CUDA_RUNTIME_CALL,
    CUDA_BASE_IMAGE,
    CMAKE_CUDA_LANGUAGE,
    NVCC_FLAGS,
]

REQUIREMENTS = (
    "--extra-index-url https://download.pytorch.org/whl/cu121",
    "torch==2.3.0",
    "cupy-cuda12x==13.1.0",
    "numpy>=1.26",
)
KERNEL = (
    "__global__ void scale(float* x, float a) {",
    "    unsigned lane;",
    '    asm("mov.u32 %0, %%laneid;" : "=r"(lane));',
    "    x[threadIdx.x] *= a;",
    "}",
)


def _finding(
    rule: Rule,
    path: str,
    line: int,
    column: int = 0,
    *,
    message: str | None = None,
    end_column: int = 0,
    fix: Fix | None = None,
    excerpt: Excerpt | None = None,
) -> Finding:
    return rule.finding(
        path,
        line,
        column,
        message=message,
        fix=fix,
        end_column=end_column,
        excerpt=excerpt,
    )


def sample_findings() -> list[Finding]:
    """Findings of every severity and category; mechanical fixes; with and without column."""
    return [
        _finding(
            CUDA_ONLY_PACKAGE,
            "requirements.txt",
            3,
            1,
            message="cupy-cuda12x has no ROCm build on PyPI",
            end_column=21,
            fix=Fix("Build CuPy from source for ROCm, or replace it with PyTorch operations."),
            excerpt=Excerpt(1, REQUIREMENTS[:5]),
        ),
        _finding(  # no column: the whole line
            CUDA_WHEEL_INDEX,
            "requirements.txt",
            1,
            message="the index https://download.pytorch.org/whl/cu121 serves CUDA wheels",
            fix=Fix(
                "Use PyTorch's ROCm index instead.",
                mechanical=True,
                replacement="--extra-index-url https://download.pytorch.org/whl/rocm6.4",
            ),
            excerpt=Excerpt(1, REQUIREMENTS[:3]),
        ),
        _finding(
            PYNVML_QUERY,
            "src/train.py",
            14,
            5,
            message="pynvml.nvmlDeviceGetMemoryInfo() has no ROCm counterpart in pynvml",
            fix=Fix("Use amdsmi (amdsmi_get_gpu_vram_usage) or torch.cuda.mem_get_info()."),
            excerpt=Excerpt(
                12,
                (
                    "def free_memory(index: int) -> int:",
                    "    handle = pynvml.nvmlDeviceGetHandleByIndex(index)",
                    "    info = pynvml.nvmlDeviceGetMemoryInfo(handle)",
                    "    return info.free",
                ),
            ),
        ),
        _finding(
            CUDA_DEVICE_STRING,
            "src/train.py",
            22,
            14,
            message="torch.device('cuda') selects the AMD GPU on ROCm builds of PyTorch",
            fix=Fix("Nothing to change."),
            excerpt=Excerpt(21, ("", "    device = torch.device('cuda')", "")),
        ),
        _finding(
            INLINE_PTX,
            "csrc/kernels.cu",
            42,
            5,
            message="inline PTX `mov.u32 %0, %%laneid;` reads the lane id",
            end_column=47,
            excerpt=Excerpt(40, KERNEL),
        ),
        _finding(
            INLINE_PTX, "csrc/kernels.cu", 57, excerpt=Excerpt(57, ('    asm("bar.sync 0;");',))
        ),
        _finding(
            CUDA_RUNTIME_CALL,
            "csrc/kernels.cu",
            12,
            5,
            message="cudaMalloc becomes hipMalloc",
            end_column=15,
            fix=Fix("Rename the call.", mechanical=True, replacement="hipMalloc"),
            excerpt=Excerpt(11, ("    float* x;", "    cudaMalloc(&x, n * sizeof(float));")),
        ),
        _finding(
            CUDA_BASE_IMAGE,
            "Dockerfile",
            1,
            message="FROM nvidia/cuda:12.1.0-runtime-ubuntu22.04 is a CUDA image",
            fix=Fix(
                "Build on a ROCm image.",
                mechanical=True,
                replacement="FROM rocm/dev-ubuntu-22.04:6.4",
            ),
            excerpt=Excerpt(1, ("FROM nvidia/cuda:12.1.0-runtime-ubuntu22.04", "WORKDIR /app")),
        ),
        _finding(  # line 0: the whole file, no excerpt
            CMAKE_CUDA_LANGUAGE,
            "CMakeLists.txt",
            0,
            message="the project enables CUDA; HIP needs enable_language(HIP)",
        ),
    ]


def sample_skipped() -> list[Skipped]:
    """A skipped binary, a partly read non-UTF-8 file, a malformed file and a rule crash."""
    return [
        Skipped("assets/model.bin", SkipKind.BINARY, "binary file (NUL byte in the first 8 KiB)"),
        Skipped(
            "csrc/legacy.cu",
            SkipKind.NOT_UTF8,
            "not valid UTF-8 (byte 0xff); analysed with replacement characters",
            line=7,
            partial=True,
        ),
        Skipped(
            "configs/env.yaml",
            SkipKind.MALFORMED,
            "YAML does not parse: mapping values are not allowed here",
            line=4,
        ),
        Skipped(
            "src/train.py",
            SkipKind.RULE_CRASH,
            "scanner 'python' crashed (IndexError: list index out of range) at python_src.py:88;"
            " findings from it for this file are missing — please report this bug",
        ),
    ]


def sample_scan() -> ScanResult:
    findings = sample_findings()
    return ScanResult(
        root="demo-project",
        findings=sorted(findings, key=lambda f: f.sort_key),
        skipped=sorted(sample_skipped()),
        stats=ScanStats(
            files_seen=11,
            files_scanned=9,
            bytes_scanned=48213,
            seconds=0.842,
            by_kind={"python": 3, "cuda": 2, "requirements": 1, "dockerfile": 1, "cmake": 1},
        ),
        suppressed=2,
        baselined=1,
        rules=RuleTable(RULES),
    )


def sample_change_scan() -> ScanResult:
    """The sample scan as `scan --diff origin/main` would report it: a pull request's findings."""
    scan = sample_scan()
    files = {f.location.path: frozenset({f.location.line}) for f in scan.findings}
    scan.change = ChangedLines("origin/main", "0123456789abcdef" * 2 + "01234567", files)
    scan.outside_change = 4
    return scan


SAMPLE_STEPS = [
    NextStep(
        "Apply the 3 fixes gpuport makes into a copy and review the diff",
        "gpuport port demo-project --out demo-project-rocm",
    ),
    NextStep("GP101 at requirements.txt:3:1: Replace cupy-cuda12x with cupy-rocm-7-0."),
    NextStep("See which AMD GPUs your model fits and what it costs", "gpuport plan MODEL"),
    DOCTOR_STEP,
    *ROCM_MACHINE_STEPS,
]
HOPPER = FoldedComponent(
    "csrc/hopper",
    "NVIDIA-only",
    12,
    "csrc/ck (Composable Kernel)",
    (Evidence("setup.py", 80, "compiled only when torch.version.hip is None"),),
)


def sample_assessment() -> Assessment:
    """A blocked verdict, with the numbers worked out by hand for :func:`sample_scan`."""
    scan = sample_scan()
    # the Python finding sits in the project's tests: listed, but not counted
    scan.findings = [
        dataclasses.replace(f, tier=Tier.TESTS) if f.rule_id == "GP201" else f
        for f in scan.findings
    ]
    blockers = [f for f in scan.findings if f.severity is Severity.BLOCKER]
    top = sorted(
        (f for f in scan.findings if f.severity >= Severity.MEDIUM and f.tier is Tier.PRODUCT),
        key=lambda f: (-f.severity, f.sort_key),
    )[:2]
    return Assessment(
        scan=scan,
        verdict=Verdict.BLOCKED,
        reasons=[
            "GP101 at requirements.txt:3:1: cupy-cuda12x has no ROCm build on PyPI",
            "2 file(s) could not be analysed; the verdict does not cover them",
        ],
        blockers=blockers,
        mechanical=3,
        actionable=8,
        effort=[
            EffortLine(Category.DEPENDENCIES, 2, 1, 16.1),
            EffortLine(Category.PYTHON, 1, 0, 4.0),
            EffortLine(Category.KERNELS, 3, 1, 5.1),
            EffortLine(Category.CONTAINERS, 1, 1, 0.1),
            EffortLine(Category.BUILD, 1, 0, 0.25),
        ],
        assumptions=(
            "an engineer who knows the code but not ROCm",
            "6 productive hours a day; the range is half to double the estimate",
        ),
        top=top,
        next_steps=list(SAMPLE_STEPS),
        tiers={Tier.PRODUCT: len(scan.findings) - 1, Tier.TESTS: 1},
        folded=[HOPPER],
    )


def decided_assessment() -> Assessment:
    """:func:`sample_assessment` with a full recommendation (outcome, factors, economics)."""
    return dataclasses.replace(sample_assessment(), recommendation=sample_recommendation())


def rocm_assessment() -> Assessment:
    """A project that already builds for ROCm: its evidence, the KB's answer, its GPU targets."""
    scan = ScanResult(
        root="flash-kernels",
        stats=ScanStats(files_seen=40, files_scanned=38, bytes_scanned=912345, seconds=0.5),
        rules=RuleTable(RULES),
    )
    coverage = ArchCoverage(
        named=("gfx90a", "gfx942"),
        instinct_covered=("gfx942", "gfx90a"),
        instinct_missing=("gfx950",),
        radeon_covered=(),
        radeon_missing=("gfx1100",),
    )
    support = RocmSupport(
        evidence=(
            Evidence("setup.py", 41, "builds the extension with hipcc when torch.version.hip"),
            Evidence(".github/workflows/rocm.yml", 0, "CI builds and tests ROCm wheels"),
        ),
        how="flash-attn is a known package: Install the ROCm build from the project's wheels.",
        package="flash-attn",
        index="",
        coverage=coverage,
    )
    return Assessment(
        scan=scan,
        verdict=Verdict.ALREADY_SUPPORTS_ROCM,
        reasons=[str(e) for e in support.evidence] + [coverage.summary],
        blockers=[],
        mechanical=0,
        actionable=0,
        effort=[],
        next_steps=[
            NextStep(support.how),
            NextStep("If your GPU is one its build leaves out, add its target: gfx950, gfx1100"),
        ],
        folded=[HOPPER],
        support=support,
    )


def empty_scan() -> ScanResult:
    return ScanResult(
        root=".", stats=ScanStats(files_seen=3, files_scanned=3), rules=RuleTable(RULES)
    )


def empty_assessment() -> Assessment:
    return Assessment(
        scan=empty_scan(),
        verdict=Verdict.READY,
        reasons=["nothing found that breaks on ROCm"],
        blockers=[],
        mechanical=0,
        actionable=0,
        effort=[],
    )


# --- hostile input ---------------------------------------------------------------------------

SCRIPT = "<script>alert(1)</script>"
IMG = '"><img src=x onerror=alert(2)>'
STYLE_BREAK = "</style><b>styled</b>"
TEMPLATE = "{{ 7*7 }}"
JS_URL = "javascript:alert(3)"
MD_LINK = "[click me](javascript:alert(4))"
HOSTILE_STRINGS = (SCRIPT, IMG, STYLE_BREAK, TEMPLATE, JS_URL, MD_LINK)

HOSTILE_RULE = Rule(
    id="GP399",
    slug="hostile-rule",
    category=Category.KERNELS,
    severity=Severity.HIGH,
    confidence=Confidence.HIGH,
    summary=f"Rule text with {SCRIPT} inside",
    what=f"What: {IMG}",
    why=f"Why: {STYLE_BREAK}",
    example=TEMPLATE,
    instead=JS_URL,
    fix=f"Fix: {SCRIPT}",
    mechanical=False,
    references=(JS_URL, "https://example.org/ok"),
)
HOSTILE_PATH = f"src/{SCRIPT}{IMG}.cu"


def hostile_scan() -> ScanResult:
    """Paths, messages, excerpts, fixes and rule text that try to inject markup."""
    findings = [
        Finding(
            rule_id="GP399",
            message=f"message {SCRIPT} {IMG} {MD_LINK} @everyone #1 | a | b |",
            location=Location(HOSTILE_PATH, 3, 2, 3, 9),
            severity=Severity.HIGH,
            confidence=Confidence.HIGH,
            category=Category.KERNELS,
            fix=Fix(f"fix {STYLE_BREAK} {JS_URL}", mechanical=True, replacement=f"{TEMPLATE}"),
            references=(JS_URL, "https://example.org/ok"),
            excerpt=Excerpt(
                1,
                (
                    f"// {SCRIPT}",
                    f"/* {STYLE_BREAK} {TEMPLATE} */",
                    f'const char* u = "{JS_URL}"; // {IMG}',
                    "```</details><details open>",
                    "\x1b[31mred\x1b[0m \u202eevil",
                ),
            ),
        ),
        Finding(
            rule_id="GP399",
            message=f"second {TEMPLATE} in a {MD_LINK}",
            location=Location(f"docs/{MD_LINK}.md", 1),
            severity=Severity.MEDIUM,
            confidence=Confidence.LOW,
            category=Category.KERNELS,
        ),
    ]
    return ScanResult(
        root=f"root{SCRIPT}",
        findings=findings,
        skipped=[
            Skipped(f"bin/{IMG}.bin", SkipKind.BINARY, f"binary {SCRIPT}"),
            Skipped("bad\udcffname.cu", SkipKind.NOT_UTF8, "not UTF-8", line=2, partial=True),
        ],
        stats=ScanStats(files_seen=4, files_scanned=3),
        rules=RuleTable([HOSTILE_RULE]),
    )


def hostile_assessment() -> Assessment:
    scan = hostile_scan()
    return Assessment(
        scan=scan,
        verdict=Verdict.READY_WITH_WORK,
        reasons=[f"GP399 at {HOSTILE_PATH}:3:2: {SCRIPT}"],
        blockers=[],
        mechanical=1,
        actionable=2,
        effort=[EffortLine(Category.KERNELS, 2, 1, 1.1)],
        assumptions=(f"assumption {STYLE_BREAK}",),
        top=list(scan.findings[:1]),
        next_steps=[NextStep(f"step {SCRIPT} {MD_LINK}", f"gpuport port '{IMG}'")],
        tiers={Tier.PRODUCT: 2},
        folded=[FoldedComponent(f"csrc/{MD_LINK}", "NVIDIA-only", 1, SCRIPT, ())],
        support=RocmSupport(
            evidence=(Evidence(HOSTILE_PATH, 2, f"what {STYLE_BREAK}"),),
            how=f"how {TEMPLATE}",
            package="",
            index="",
            coverage=ArchCoverage((), (), (), (), ()),
        ),
    )


def hostile_decided_assessment() -> Assessment:
    """:func:`hostile_assessment` with a recommendation whose every text tries to inject markup."""
    return dataclasses.replace(
        hostile_assessment(),
        recommendation=hostile_recommendation(
            f"{SCRIPT} {IMG} {STYLE_BREAK} {MD_LINK} {TEMPLATE} | a |"
        ),
    )
