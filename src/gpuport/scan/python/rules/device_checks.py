"""GP202, GP203 and GP209: code that asks which CUDA build or which NVIDIA GPU it runs on.

``torch.version.cuda``, the compute capability and the device name all answer differently on
ROCm; each check follows the value from the call that makes it (:class:`ValueKind`) and leaves
alone code that already tells ROCm apart (:func:`guards.rocm_guarded`).
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Mapping

from gpuport.findings import Category, Confidence, Severity
from gpuport.rules import rule
from gpuport.scan.python import guards
from gpuport.scan.python.checks import looks_at
from gpuport.scan.python.context import CUDA_VERSION, PythonContext, ValueKind
from gpuport.scan.python.nodes import (
    argument,
    called_name,
    literal,
    number_like,
    strings_in,
    walk_parents,
)
from gpuport.scan.python.rules.references import PYTORCH_HIP_NOTES

CUDA_VERSION_CHECK = rule(
    id="GP202",
    slug="cuda-version-check",
    category=Category.PYTHON,
    severity=Severity.MEDIUM,
    confidence=Confidence.HIGH,
    summary="Branches on, or parses, torch.version.cuda, which is None on ROCm",
    what=(
        "Finds `torch.version.cuda` (and names assigned from it) used as a condition "
        "(`if torch.version.cuda:`, `torch.version.cuda is not None`), compared, or parsed "
        "(`.split('.')`, `float(...)`, `version.parse(...)`). Code that also tests "
        "`torch.version.hip` (or an `is_rocm`/`is_hip` flag) in the same condition, the same "
        "if/elif chain, an enclosing if, or an earlier guard is left alone, and so is a test "
        "of the value (not a parse) with a ROCm test in the statement right before or after."
    ),
    why=(
        "A ROCm build of PyTorch sets `torch.version.hip` and leaves `torch.version.cuda` as "
        "None, while `torch.cuda.is_available()` still returns True. A CUDA check therefore "
        "sends a ROCm machine down the CPU or 'no GPU' path, and parsing the version raises "
        "AttributeError or TypeError."
    ),
    example=(
        "if torch.version.cuda is not None:\n    use_fused_kernels()\n"
        "major = int(torch.version.cuda.split('.')[0])\n"
    ),
    instead=("if torch.version.hip:\n    ...  # ROCm\nelif torch.version.cuda:\n    ...  # CUDA\n"),
    fix=(
        "Test `torch.version.hip` for ROCm and `torch.version.cuda` for CUDA, and give ROCm "
        "its own branch; only parse a version string after checking it is not None."
    ),
    mechanical=False,
    references=(f"{PYTORCH_HIP_NOTES}#checking-for-hip",),
    needles=("cuda",),
)

# Calls that turn a version string into numbers: given None (torch.version.cuda on ROCm)
# they raise. Other calls only pass the value on, which is not reported.
_PARSING_FUNCTIONS = frozenset(
    {"float", "int", "tuple", "list", "len", "map", "Version", "parse", "parse_version"}
    | {"LooseVersion", "StrictVersion", "version_tuple"}
)


def _use_of_version(parents: Mapping[ast.AST, ast.AST], node: ast.AST) -> str | None:
    """How ``node`` (torch.version.cuda or a name holding it) is used: "parses", "compares",
    "checks for None" (``is None`` / ``is not None``), "branches on", or None (passed on)."""
    parent = parents.get(node)
    if isinstance(parent, ast.keyword):
        parent = parents.get(parent)
        if isinstance(parent, ast.Call) and called_name(parent) in _PARSING_FUNCTIONS:
            return "parses"
        return None  # passed on as a value: default=torch.version.cuda
    if isinstance(parent, (ast.Attribute, ast.Subscript)) and parent.value is node:
        return "parses"
    if isinstance(parent, ast.Compare):
        if guards.tests_set(parent, node) or guards.tests_unset(parent, node):
            return "checks for None"
        return "compares"
    if isinstance(parent, ast.Call) and node in parent.args:
        return "parses" if called_name(parent) in _PARSING_FUNCTIONS else None
    if guards.in_condition(parents, node):
        return "branches on"
    return None


@functools.lru_cache(maxsize=8)
def _scope_parents(scope: ast.AST) -> dict[ast.AST, ast.AST]:
    """Each node's parent within ``scope`` (the scope itself has none), built once a scope."""
    if isinstance(scope, ast.Module):
        return guards.module_parents(scope)  # the module's index has it already
    return walk_parents(scope)[1]


def _guards_a_use(parents: Mapping[ast.AST, ast.AST], node: ast.AST) -> bool:
    """The None check at ``node`` protects a parse or comparison of the same value (``if cuda
    is None: return False`` before ``cuda.split('.')``, ``cuda is None or not
    cuda.startswith('12.9')``): it is the ROCm handling, not a problem. An ``assert`` or an
    ``if cuda is None: raise …`` is not: it stops a ROCm run, so it is reported itself (and
    the parses after it are not)."""
    local = _scope_parents(guards.scope_of(parents, node))
    for sub in local:
        if (
            sub is not node
            and isinstance(sub, (ast.Name, ast.Attribute))
            and guards.same_value(sub, node)
            and _use_of_version(local, sub) not in ("checks for None", "branches on")
            and (guard := guards.none_guard(local, sub)) is not None
            and not guards.stops_the_run(guard)
            and any(part is node for part in ast.walk(guard))
        ):
            return True
    return False


@looks_at(CUDA_VERSION_CHECK, attributes=(CUDA_VERSION,), followed=(ValueKind.CUDA_VERSION,))
def cuda_version_check(ctx: PythonContext, node: ast.Attribute | ast.Name) -> None:
    parents = ctx.parents
    reason = _use_of_version(parents, node)
    if reason is None:
        return
    if guards.rocm_guarded(parents, node):
        return
    if reason in ("branches on", "checks for None") and guards.beside_rocm_test(parents, node):
        return  # a test whose ROCm side the statement beside it handles (a parse still raises)
    if reason in ("parses", "compares"):
        if guards.none_guard(parents, node) is not None:
            return  # reached only once the value is known to be set: fine on ROCm
    elif _guards_a_use(parents, node):
        return
    if reason == "checks for None":
        reason = "compares"
    what = f"{node.id} (torch.version.cuda)" if isinstance(node, ast.Name) else CUDA_VERSION
    consequence = (
        "so on ROCm this raises or picks the non-CUDA path"
        if reason == "parses"
        else "so ROCm takes the non-CUDA path"
    )
    ctx.report(
        CUDA_VERSION_CHECK,
        node,
        f"{reason} {what}, which is None on ROCm builds (torch.version.hip is set there), "
        f"{consequence}",
    )


# NVIDIA architecture names (sm_90, compute_80), as literals or built in f-strings (sm_{major}).
_SM_NAME_RE = re.compile(r"^(?:sm|compute)_\d{2,3}[a-z]?$")
_ARCH_NAME_NEEDLES = tuple(
    f"{name}_{after}" for name in ("sm", "compute") for after in "0123456789{"
)

DEVICE_CAPABILITY_GATE = rule(
    id="GP203",
    slug="device-capability-gate",
    category=Category.PYTHON,
    severity=Severity.MEDIUM,
    confidence=Confidence.HIGH,
    summary="Gates a feature on NVIDIA compute-capability numbers or sm_XX names",
    what=(
        "Finds `torch.cuda.get_device_capability()` results (also `get_device_properties(…)"
        ".major/.minor`, through the names they are assigned to) compared with numbers such "
        "as `>= (8, 0)`, `major >= 8` or `== (9, 0)`; `sm_XX` / `compute_XX` strings compared "
        "with something; and f-strings that build `sm_{major}{minor}` from the capability."
    ),
    why=(
        "On ROCm the capability is the gfx version: (9, 0) for gfx90a (MI200), (9, 4) for "
        "gfx942 (MI300), (9, 5) for gfx950, (11, 0) for RDNA3. So `>= (8, 0)` passes on every "
        "recent AMD GPU, and `== (9, 0)` — Hopper on NVIDIA — matches MI200, which lacks "
        "Hopper's features (FP8, TMA, FA3). The gate enables kernels that do not exist or "
        "disables ones that do."
    ),
    example="if torch.cuda.get_device_capability() >= (8, 0):\n    use_bf16_kernels()\n",
    instead=(
        "if torch.version.hip:\n"
        "    arch = torch.cuda.get_device_properties(0).gcnArchName  # e.g. 'gfx942:sramecc+:xnack-'\n"
        "    fast = arch.startswith(('gfx90a', 'gfx94', 'gfx95'))\n"
        "else:\n    fast = torch.cuda.get_device_capability() >= (8, 0)\n"
        "# or ask for the feature: torch.cuda.is_bf16_supported()\n"
    ),
    fix=(
        "Ask for the feature itself where PyTorch offers a query (`is_bf16_supported()`), or "
        "branch on `torch.version.hip` and test the gfx name from `gcnArchName` on ROCm."
    ),
    mechanical=False,
    references=(
        "https://github.com/pytorch/torchtitan/pull/4778",
        "https://github.com/vllm-project/vllm/issues/40620",
        "https://github.com/ROCm/pytorch/pull/1846",
    ),
    needles=("get_device_capability", "get_device_properties", *_ARCH_NAME_NEEDLES),
)


@looks_at(DEVICE_CAPABILITY_GATE, nodes=(ast.Compare, ast.JoinedStr))
def device_capability_gate(ctx: PythonContext, node: ast.Compare | ast.JoinedStr) -> None:
    if ctx.imports_nvidia_only_dsl():
        return  # a CuTe DSL file never runs on ROCm: GP201 reports its import, once
    if isinstance(node, ast.JoinedStr):  # f"sm_{major}{minor}"
        written = "".join(literal(part) or "" for part in node.values)
        if "sm_" not in written and "compute_" not in written:
            return
        if any(
            isinstance(part, ast.FormattedValue) and ctx.kind(part.value) is ValueKind.CAPABILITY
            for part in node.values
        ) and not guards.rocm_guarded(ctx.parents, node):
            ctx.report(
                DEVICE_CAPABILITY_GATE,
                node,
                "builds an NVIDIA architecture name (sm_XX) from the compute capability; "
                "on ROCm that gives a meaningless name from the gfx version",
            )
        return
    operands = [node.left, *node.comparators]
    kinds = ctx.operand_kinds(node)
    if ValueKind.CAPABILITY in kinds:
        numbers = [
            o
            for o, k in zip(operands, kinds, strict=True)
            if k is not ValueKind.CAPABILITY and number_like(o)
        ]
        if numbers and not guards.rocm_guarded(ctx.parents, node):
            shown = ast.unparse(numbers[0])
            ctx.report(
                DEVICE_CAPABILITY_GATE,
                node,
                f"compares the CUDA compute capability with {shown}: on ROCm it is the gfx "
                "version ((9, 0) for MI200, (9, 4) for MI300), so this gate misfires",
            )
    for operand in operands:
        text = literal(operand)
        if text and _SM_NAME_RE.match(text) and not guards.rocm_guarded(ctx.parents, node):
            ctx.report(
                DEVICE_CAPABILITY_GATE,
                operand,
                f"compares with the NVIDIA architecture name {text!r}; ROCm builds name "
                "gfx targets (gfx90a, gfx942…)",
            )


DEVICE_NAME_MATCH = rule(
    id="GP209",
    slug="device-name-match",
    category=Category.PYTHON,
    severity=Severity.MEDIUM,
    confidence=Confidence.HIGH,
    summary="Matches the GPU name against NVIDIA product names",
    what=(
        "Finds `torch.cuda.get_device_name()` and `get_device_properties(…).name` results "
        "(also lower-/upper-cased, and through the names they are assigned to) tested with "
        "`in`, `==`, `.startswith()`, `.find()` or `re.search()` against strings such as "
        "'A100', 'H100', 'Tesla' or 'NVIDIA'. Checks that also name an AMD product, or that "
        "sit behind a ROCm test, are left alone."
    ),
    why=(
        "On ROCm the name is AMD's ('AMD Instinct MI300X', 'AMD Radeon RX 7900 XTX'), so an "
        "NVIDIA name test always fails: batch sizes, kernels or memory limits chosen by name "
        "fall back to the slowest or wrong default."
    ),
    example="if 'A100' in torch.cuda.get_device_name():\n    batch_size = 64\n",
    instead=(
        "free, total = torch.cuda.mem_get_info()     # size by memory, not by name\n"
        "arch = torch.cuda.get_device_properties(0).gcnArchName  # on ROCm: gfx942…\n"
    ),
    fix=(
        "Decide from measurable properties (memory, `is_bf16_supported()`, gfx name on ROCm) "
        "rather than from the marketing name, or add the AMD product names you target."
    ),
    mechanical=False,
    references=(f"{PYTORCH_HIP_NOTES}#checking-for-hip",),
    needles=("get_device_name", "get_device_properties"),
)

# str methods and re functions that test a name against a string.
_NAME_TEST_METHODS = (
    *("startswith", "endswith", "find", "rfind", "index", "rindex", "count", "__contains__"),
)
_REGEX_CALLS = ("re.search", "re.match", "re.fullmatch", "re.findall", "re.finditer")


@looks_at(DEVICE_NAME_MATCH, nodes=(ast.Compare,), methods=_NAME_TEST_METHODS, calls=_REGEX_CALLS)
def device_name_match(ctx: PythonContext, node: ast.Compare | ast.Call) -> None:
    if isinstance(node, ast.Compare):  # "A100" in name, name == "…"
        kinds = ctx.operand_kinds(node)
        if ValueKind.DEVICE_NAME not in kinds:
            return
        operands = [node.left, *node.comparators]
        others = [o for o, k in zip(operands, kinds, strict=True) if k is not ValueKind.DEVICE_NAME]
        strings = strings_in(others)
    elif isinstance(node.func, ast.Attribute) and node.func.attr in _NAME_TEST_METHODS:
        if ctx.kind(node.func.value) is not ValueKind.DEVICE_NAME:
            return  # name.startswith("Tesla")
        strings = strings_in(node.args)
    else:  # re.search(r"H100|H200", name)
        if ctx.kind(argument(node, 1, "string")) is not ValueKind.DEVICE_NAME:
            return
        strings = strings_in([argument(node, 0, "pattern")])
    if not strings or any(guards.AMD_NAME_RE.search(s) for s in strings):
        return  # nothing literal to judge, or the code already names AMD products
    if guards.rocm_guarded(ctx.parents, node):
        return
    shown = ", ".join(repr(s) for s in strings[:3])
    ctx.report(
        DEVICE_NAME_MATCH,
        node,
        f"matches the GPU name against {shown}; on ROCm the name is AMD's "
        "('AMD Instinct MI300X'…), so the test is always false there",
    )
