"""GP201 cuda-only-import and GP217 triton-cuda-libdevice: what a module's imports bring along."""

from __future__ import annotations

import ast

from gpuport import kb
from gpuport.findings import Category, Confidence, Severity
from gpuport.kb import python_code
from gpuport.rules import rule
from gpuport.scan.python import guards, reach
from gpuport.scan.python.checks import ModuleImport, looks_at
from gpuport.scan.python.context import NVIDIA_ONLY_DSL_MODULES, PythonContext
from gpuport.scan.python.nodes import spelled
from gpuport.scan.python.optional_imports import optional_import_checked
from gpuport.scan.python.rules.references import PYTORCH_ROCM_COMPAT

# Packages that are one kernel backend among others (the knowledge base's categories): code
# that imports one optionally, with a fallback, takes another kernel path where it is missing,
# as ROCm does for FlashAttention-3/4 or CuTe DSL kernels. Nothing to port in that import.
_KERNEL_BACKEND_CATEGORIES = frozenset({"attention kernel", "kernel DSL", "kernel templates"})
# NVIDIA's CUDA Python bindings, which CuTe DSL kernels launch through: in a CuTe DSL file the
# DSL's own finding covers them.
_CUTE_DSL_RUNTIME = frozenset({"cuda-python", "cuda-bindings", "cuda-core"})
# Other NVIDIA-only kernel packages whose kernels a module launches through those bindings (a
# CUstream for cuDNN frontend's fused kernels): the bindings go wherever that package goes, so
# the package's own finding (or its dependency line) is the decision.
_BINDINGS_USERS = NVIDIA_ONLY_DSL_MODULES | {"cudnn"}

# How the knowledge base writes an entry's confidence.
_CONFIDENCE_WORDS = {"high": Confidence.HIGH, "medium": Confidence.MEDIUM, "low": Confidence.LOW}


def _reported(package: kb.Package) -> bool:
    """GP201 reports a package unless it works as is, or is a framework whose only change is
    its install index (the dependency rules, GP1xx, report that)."""
    return not (
        package.status is kb.PackageStatus.WORKS
        or (package.status is kb.PackageStatus.NEEDS_ROCM_BUILD and package.category == "framework")
    )


def _import_needles() -> tuple[str, ...]:
    """The import name of each reported package as imports write it: after a space or a quote
    (``import x``, ``from x``, ``import_module("x")``), so that ``verl`` (a package) does not
    make every file mentioning "overlap" worth parsing."""
    tops = {
        name.split(".", 1)[0]
        for package in kb.packages().values()
        if _reported(package)
        for name in package.import_names
    }
    return tuple(f"{quote}{top}" for top in sorted(tops) for quote in (" ", "'", '"'))


CUDA_ONLY_IMPORT = rule(
    id="GP201",
    slug="cuda-only-import",
    category=Category.PYTHON,
    severity=Severity.HIGH,  # per finding: from the package's status in the knowledge base
    confidence=Confidence.HIGH,
    summary="Imports a package that has no ROCm build, or needs a special one",
    what=(
        "Looks up every `import` and `from … import` (and `importlib.import_module` / "
        "`__import__` with a literal name) in gpuport's knowledge base of Python packages. "
        "It reports packages whose ROCm status is not-supported (HIGH), partial or CUDA-only "
        "artifacts (MEDIUM), and packages that need a ROCm build from another index or from "
        "source (LOW). Frameworks such as torch, whose only change is the install index, are "
        "left to the dependency rules (GP1xx). An import guarded by `try/except ImportError` "
        "is at most LOW, because the code already copes with its absence, and not reported "
        "at all for a package whose ROCm build comes from elsewhere, a CUDA-only artifact (the "
        "`nvidia` runtime wheels), or one kernel backend "
        "among others (FlashAttention-3/4, CuTe DSL), when the code carries on without it: a "
        "handler with no `raise`, the `else:` of a `try:` that probes for the package, or an "
        'availability check (`if HAS_FLASH_ATTENTION:`, or `if find_spec("vllm") is None: '
        "return` before the import). Any package's import is left alone when it is optional "
        "and checked: in a `try:` that only imports and binds names, whose `except "
        "ImportError` handler carries on, in a module that tests the imported name or a name "
        "the handler binds before use (`if pynvml:`, `if HAS_TRT:`), and that also copes with a "
        "call into the package failing (`except pynvml.NVMLError:` or `except Exception:` "
        "around one, carrying on): pynvml imports on a ROCm machine that has it installed "
        "and fails only in `nvmlInit`. NVIDIA's CUDA Python "
        "bindings in a "
        "CuTe DSL file, or in one that imports cuDNN's Python frontend (`import cudnn`), are "
        "covered by that import. Imports under "
        "`if TYPE_CHECKING:` are ignored, and so are an import of a package that works on ROCm "
        "once built for it, or in part, inside an `if` whose test names the package (`if "
        "…deepspeed_plugin…: import deepspeed`: the program already uses it), and an import "
        "of a package whose CPU path works anywhere (xgboost) in a file that never asks for "
        "its GPU (`device='cuda'`, `tree_method='gpu_hist'`)."
    ),
    why=(
        "Packages such as TensorRT, PyCUDA, pynvml or numba.cuda talk to the CUDA driver or "
        "NVML directly and have no ROCm build: the import fails, or the package loads and "
        "finds no NVIDIA GPU. Others (flash-attn, bitsandbytes, apex, xformers) have ROCm "
        "builds that must be installed from a different place or compiled."
    ),
    example="import pynvml\nimport tensorrt as trt\nfrom flash_attn import flash_attn_func\n",
    instead=(
        "import amdsmi                  # AMD's counterpart of NVML\n"
        "# TensorRT -> MIGraphX or ONNX Runtime's MIGraphX provider\n"
        "from torch.nn.functional import scaled_dot_product_attention\n"
    ),
    fix=(
        "Replace the package with the ROCm counterpart named in the finding, or install its "
        "ROCm build as the finding says."
    ),
    mechanical=False,
    references=(PYTORCH_ROCM_COMPAT,),
    needles=_import_needles(),
)


def _asks_for_gpu(parents: guards.Parents, node: ast.AST, words: tuple[str, ...]) -> bool:
    """The module holding ``node`` writes a string literal or a keyword argument starting
    with one of ``words`` (the package's GPU parameters: ``device="cuda"``, ``gpu_id=0``)."""
    module: ast.AST | None = node
    while module is not None and not isinstance(module, ast.Module):
        module = parents.get(module)
    for sub in ast.walk(module or node):
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
            text = sub.value.lower()
        elif isinstance(sub, ast.keyword) and sub.arg:
            text = sub.arg.lower()
        else:
            continue
        if text.startswith(words):
            return True
    return False


# Packages whose absence code may cope with on ROCm: one whose ROCm build is installed from
# elsewhere, and a CUDA-only artifact (the nvidia-* runtime wheels, which a ROCm install never
# needs: code that looks in them for CUDA headers or libraries and carries on without them
# does the right thing there).
_ABSENT_ON_ROCM_IS_FINE = frozenset(
    {kb.PackageStatus.NEEDS_ROCM_BUILD, kb.PackageStatus.NOT_APPLICABLE}
)
# The statuses of packages that run on ROCm once the right build is installed, or with limits:
# importing one only where the code already knows it is in use is no new porting work.
_USABLE_ON_ROCM = frozenset({kb.PackageStatus.NEEDS_ROCM_BUILD, kb.PackageStatus.PARTIAL})


def _imported_where_in_use(parents: guards.Parents, node: ast.AST, top: str) -> bool:
    """The import sits in the body of an ``if`` (in its own function) whose test names the
    package: ``if accelerator.state.deepspeed_plugin.zero_stage == 3: import deepspeed``,
    ``if backend == "flashinfer": import flashinfer``. It runs only where the program already uses the
    package (the user's configuration says so), so the package's ROCm question is the
    dependency's (GP1xx), not this line's."""
    name = top.lower().replace("_", "")
    for child, parent in guards.ancestors(parents, node):
        if isinstance(parent, ast.If) and child in parent.body and name in spelled(parent.test):
            return True
        if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            return False
    return False


@looks_at(CUDA_ONLY_IMPORT, events=(ModuleImport,))
def cuda_only_import(ctx: PythonContext, imported: ModuleImport) -> None:
    if ctx.is_first_party(imported.module):
        return  # the project importing itself (deepspeed in DeepSpeed): not a dependency
    package = kb.package_for_import(imported.module)
    if package is None or not _reported(package):
        return
    node = imported.node
    if guards.under_type_checking(ctx.parents, node):
        return
    if package.name in _CUTE_DSL_RUNTIME and not _BINDINGS_USERS.isdisjoint(
        guards.module_imports(ctx.parents, node)
    ):
        return  # the file's CuTe DSL or cuDNN frontend import is the one finding
    if package.gpu_words and not _asks_for_gpu(ctx.parents, node, package.gpu_words):
        return  # xgboost on the CPU: its default, which runs on ROCm as anywhere
    top = imported.module.split(".", 1)[0]
    if package.status in _USABLE_ON_ROCM and _imported_where_in_use(ctx.parents, node, top):
        return
    if optional_import_checked(ctx.parents, node):
        # An optional import the module checks before use (`try: import pynvml` / `except
        # ImportError: return` … `if pynvml:`): on ROCm the package is missing and the code
        # takes the path it already has without it; nothing to port, whatever the package.
        return
    if not ctx.first_time(CUDA_ONLY_IMPORT, package.name):
        return
    if (
        package.status in _ABSENT_ON_ROCM_IS_FINE or package.category in _KERNEL_BACKEND_CATEGORIES
    ) and (
        guards.import_has_fallback(ctx.parents, node)
        or reach.import_probed(ctx.parents, node, imported.module.split(".", 1)[0])
    ):
        # Missing on ROCm until its ROCm build is installed, never needed there (a CUDA
        # runtime wheel), or one kernel backend among others, and the code carries on without it (DeepSpeed's optional apex, exllamav2's
        # flash_attn, TransformerEngine's FlashAttention-3 probe): nothing breaks.
        return
    where_imported = python_code.statuses_where_imported()[package.status]
    severity = Severity.parse(where_imported.severity)
    shown = imported.shown
    if not shown or kb.package_for_import(shown) is not package:
        shown = imported.module  # `from numba import cuda`: the package is numba.cuda
    message = f"imports {shown}: {package.name} {where_imported.words}"
    if guards.import_guarded(ctx.parents, node):
        severity = min(severity, Severity.LOW)
        message += " (optional here: the import is guarded by try/except)"
    ctx.report(
        CUDA_ONLY_IMPORT,
        node,
        message,
        key=package.name,
        severity=severity,
        confidence=_CONFIDENCE_WORDS.get(package.confidence.lower(), Confidence.MEDIUM),
        fix=package.instead or None,
        references=package.sources,
    )


_TRITON_CUDA_EXTRA = "triton.language.extra.cuda"

TRITON_CUDA_LIBDEVICE = rule(
    id="GP217",
    slug="triton-cuda-libdevice",
    category=Category.PYTHON,
    severity=Severity.MEDIUM,
    confidence=Confidence.HIGH,
    summary="Uses Triton's CUDA-only libdevice module (triton.language.extra.cuda)",
    what=(
        "Finds imports from `triton.language.extra.cuda` and uses of `tl.extra.cuda.libdevice.*`."
    ),
    why=(
        "`triton.language.extra.cuda.libdevice` calls NVIDIA's `__nv_*` math library, which "
        "the AMD backend does not link, so kernels using it fail to compile on ROCm. Triton's "
        "`triton.language.extra.libdevice` dispatches to the CUDA or HIP library for the "
        "active target (some functions exist only on CUDA)."
    ),
    example="from triton.language.extra.cuda import libdevice\n",
    instead="from triton.language.extra import libdevice\n",
    fix="Import libdevice from `triton.language.extra` and check each function exists for HIP.",
    mechanical=False,
    references=(
        "https://github.com/triton-lang/triton/pull/3825",
        "https://github.com/triton-lang/triton/issues/10375",
    ),
    # How code names the module: `tl.extra.cuda`, `triton.language.extra.cuda`, `from
    # triton.language.extra import cuda`, `import triton.language.extra as extra`. "cuda" is in
    # most files of a PyTorch project, "extra" in many (`extra_repr`): either made the scan
    # parse them all (benchmarks/results/python_vs_bandit.md).
    needles=("extra.cuda", "extra import", "extra as"),
)


@looks_at(TRITON_CUDA_LIBDEVICE, events=(ModuleImport,), attributes=(_TRITON_CUDA_EXTRA,))
def triton_cuda_libdevice(ctx: PythonContext, subject: ModuleImport | ast.Attribute) -> None:
    if isinstance(subject, ast.Attribute):
        ctx.report(
            TRITON_CUDA_LIBDEVICE,
            subject,
            f"uses {_TRITON_CUDA_EXTRA}: NVIDIA's libdevice, which Triton's AMD backend does not "
            "link",
        )
        return
    module = subject.module
    if module == _TRITON_CUDA_EXTRA or module.startswith(_TRITON_CUDA_EXTRA + "."):
        ctx.report(
            TRITON_CUDA_LIBDEVICE,
            subject.node,
            f"imports {module}: NVIDIA's libdevice, which Triton's AMD backend does not link",
        )
