"""GP202, GP203 and GP209: code that asks which CUDA build or which NVIDIA GPU it runs on.

``torch.version.cuda``, the compute capability and the device name all answer differently on
ROCm; each check follows the value from the call that makes it (:class:`ValueKind`) and leaves
alone code that already tells ROCm apart (:func:`guards.rocm_guarded`).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Mapping

from gpuport.findings import Category, Confidence, Severity
from gpuport.rules import rule
from gpuport.scan.python import callers, guards
from gpuport.scan.python.checks import looks_at
from gpuport.scan.python.context import CUDA_VERSION, PythonContext, ValueKind
from gpuport.scan.python.nodes import (
    argument,
    called_name,
    literal,
    number_like,
    spelled,
    strings_in,
)
from gpuport.scan.python.nodes import walk as walk_nodes
from gpuport.scan.python.rules.capabilities import (
    Capability,
    answers,
    blackwell_for_amd,
    misled,
)
from gpuport.scan.python.rules.references import PYTORCH_HIP_NOTES
from gpuport.scan.python.rules.refusals import (
    NOTICE_CALLS,
    function_local,
    only_refuses,
    refuses_amd,
    scope_parents,
)

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
        "of the value (not a parse) with a ROCm test in the statement right before or after, "
        "or an early `return` on a build without CUDA from a function that fills "
        "`TORCH_CUDA_ARCH_LIST` (only CUDA builds read it; ROCm's take `PYTORCH_ROCM_ARCH`)."
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


def _guards_a_use(parents: Mapping[ast.AST, ast.AST], node: ast.AST) -> bool:
    """The None check at ``node`` protects a parse or comparison of the same value (``if cuda
    is None: return False`` before ``cuda.split('.')``, ``cuda is None or not
    cuda.startswith('12.9')``): it is the ROCm handling, not a problem. An ``assert`` or an
    ``if cuda is None: raise …`` is not: it stops a ROCm run, so it is reported itself (and
    the parses after it are not)."""
    local = scope_parents(guards.scope_of(parents, node))
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


# Read only by CUDA builds of extensions; ROCm builds take PYTORCH_ROCM_ARCH.
_CUDA_ARCH_LIST_VARIABLE = "TORCH_CUDA_ARCH_LIST"


def _skips_cuda_arch_setup(parents: Mapping[ast.AST, ast.AST], node: ast.AST) -> bool:
    """``if not torch.version.cuda: return`` in a function that fills TORCH_CUDA_ARCH_LIST:
    only CUDA builds read that variable, so returning early on ROCm is the right answer."""
    test = parents.get(node)
    unset = (isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)) or (
        isinstance(test, ast.Compare) and guards.tests_unset(test, node)
    )
    statement = parents.get(test) if unset and test is not None else None
    if not isinstance(statement, ast.If) or statement.test is not test or statement.orelse:
        return False
    body = statement.body
    if len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is not None:
        return False
    function = guards.scope_of(parents, statement)
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    return any(
        isinstance(part, ast.Constant) and part.value == _CUDA_ARCH_LIST_VARIABLE
        for part in ast.walk(function)
    )


@looks_at(CUDA_VERSION_CHECK, attributes=(CUDA_VERSION,), followed=(ValueKind.CUDA_VERSION,))
def cuda_version_check(ctx: PythonContext, node: ast.Attribute | ast.Name) -> None:
    parents = ctx.parents
    reason = _use_of_version(parents, node)
    if reason is None:
        return
    if guards.rocm_guarded(parents, node):
        return
    if reason in ("branches on", "checks for None") and (
        guards.beside_rocm_test(parents, node) or _skips_cuda_arch_setup(parents, node)
    ):
        return  # a test whose ROCm side the statement beside it handles (a parse still raises)
    if reason in ("parses", "compares"):
        if guards.none_guard(parents, node) is not None:
            return  # reached only once the value is known to be set: fine on ROCm
    elif _guards_a_use(parents, node):
        return
    if callers.only_called_on_cuda_side(parents, node):
        return  # in a helper every caller runs only on CUDA (the else of `if is_rocm:`)
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
        "as `>= (9, 0)`, `major >= 9`, `== (9, 0)` or `major in (10, 12)`; `sm_XX` / `compute_XX` strings compared "
        "with something; and f-strings that build `sm_{major}{minor}` from the capability."
    ),
    why=(
        "On ROCm the capability is the gfx version: (9, 0) for gfx90a (MI200), (9, 4) for "
        "gfx942 (MI300), (9, 5) for gfx950, (10, 3) for RDNA2, (11, 0) for RDNA3, (12, 0) for "
        "RDNA4. So `>= (9, 0)` passes on MI300, which lacks Hopper's features (TMA, wgmma, "
        "FA3, the e4m3fn FP8 of `torch._scaled_mm` on gfx942), `== 12` or `>= 10` pass on "
        "RDNA cards that lack Blackwell's, and the gate enables kernels that do not exist there. "
        "Only such gates are reported: each comparison is evaluated at every capability torch "
        "reports for the targets PyTorch's ROCm wheels are built for (kb/gpu_stack.toml), and it "
        "is reported when some AMD GPU answers it as no NVIDIA GPU from Pascal to Ampere (no "
        "FP8, no TMA) does. When every AMD answer is one such a GPU also gives (`>= (8, 0)`, "
        "`< 7`, `major == 8`), the AMD GPU takes the path the code keeps for those GPUs, which "
        "asks for nothing ROCm lacks (bf16, matrix cores, flash attention through AOTriton/CK). "
        "Also left alone: gates whose branches only pick numbers (a workspace or block size) or "
        "narrow a list of autotune configs, a result stored in a function's local that the "
        "function never reads, `sm_XX` names built only to label a record or a log line, "
        "a gate whose branch only refuses (`assert`, or an `if` that only raises or exits: "
        "it selects no code) unless it asks for Blackwell or turns an AMD GPU away from "
        "code an older NVIDIA GPU runs (`if cap[0] >= 9: raise`), and a gate ANDed with a "
        "condition never true on ROCm (at least some CUDA version, "
        "`is_cuda_version_at_least(…)`, a package with no ROCm build such as DeepGEMM or "
        "CuTe DSL being there; not its negation), also through a private helper every call "
        "of which is such a part."
    ),
    example="if torch.cuda.get_device_capability() >= (9, 0):\n    use_hopper_fp8_kernels()\n",
    instead=(
        "if torch.version.hip:\n"
        "    arch = torch.cuda.get_device_properties(0).gcnArchName  # e.g. 'gfx942:sramecc+:xnack-'\n"
        "    fp8 = arch.startswith(('gfx942', 'gfx950'))  # and use the fnuz types on gfx942\n"
        "else:\n    fp8 = torch.cuda.get_device_capability() >= (9, 0)\n"
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


def _numbers_only(node: ast.AST | None) -> bool:
    """An int or float expression of literals (``32 * 1024 * 1024 + 1024``, ``-1``)."""
    if node is None:
        return False
    for part in ast.walk(node):
        if isinstance(part, ast.Constant):
            if type(part.value) not in (int, float):
                return False
        elif not isinstance(part, (ast.BinOp, ast.UnaryOp, ast.operator, ast.unaryop)):
            return False
    return True


# What a number a gate picks must be named for to be a size (a workspace, a block or tile, a
# split, stages, warps…); a number named otherwise (`fa_version = 3`, `return 3` from
# `kernel_generation()`) may pick a code path written for newer NVIDIA GPUs.
_SIZE_NAME_RE = re.compile(
    r"(?i)size|bytes|workspace|block|tile|split|chunk|stage|warp|thread|num_|count|limit"
    r"|align|pad|batch|width|depth"
)


def _name_of(target: ast.AST) -> str:
    """``tile``, ``self.tile``, ``cfg["tile"]``: the name a value is stored under."""
    if isinstance(target, ast.Name):
        return target.id
    if isinstance(target, ast.Attribute):
        return target.attr
    if isinstance(target, ast.Subscript) and isinstance(target.slice, ast.Constant):
        return str(target.slice.value)
    return ""


def _sized(parents: Mapping[ast.AST, ast.AST], node: ast.AST) -> bool:
    """The number ``node`` (a statement, or an ``x if gate else y``) sets or returns is named
    for a size: the assigned name, the keyword, or for a ``return`` the function's name."""
    statement = node
    if isinstance(node, ast.IfExp):
        parent = parents.get(node)
        if isinstance(parent, ast.keyword):
            return bool(parent.arg and _SIZE_NAME_RE.search(parent.arg))
        statement = parent if parent is not None else node
    if isinstance(statement, ast.Assign):
        names = [_name_of(target) for target in statement.targets]
    elif isinstance(statement, (ast.AnnAssign, ast.AugAssign)):
        names = [_name_of(statement.target)]
    elif isinstance(statement, ast.Return):
        scope = guards.scope_of(parents, statement)
        names = [getattr(scope, "name", "")]
    else:
        return False
    return all(name and _SIZE_NAME_RE.search(name) for name in names)


def _picks_numbers(body: list[ast.stmt], parents: Mapping[ast.AST, ast.AST]) -> bool:
    """A branch that only sets or returns numbers named for a size: a size, not a code path."""
    sets = [s for s in body if not isinstance(s, ast.Pass)]
    return bool(sets) and all(
        isinstance(s, (ast.Return, ast.Assign, ast.AnnAssign, ast.AugAssign))
        and _numbers_only(s.value)
        and _sized(parents, s)
        for s in sets
    )


def _narrows_list(statement: ast.If, parents: Mapping[ast.AST, ast.AST]) -> bool:
    """``if gate: return [c for c in configs if …]`` with ``return configs`` as the other way
    out: the gate only drops autotune configs, every GPU still runs the same kernel."""
    if len(statement.body) != 1 or not isinstance(statement.body[0], ast.Return):
        return False
    value = statement.body[0].value
    if not isinstance(value, ast.ListComp) or len(value.generators) != 1:
        return False
    source = value.generators[0].iter
    if not isinstance(source, ast.Name):
        return False
    others: list[ast.stmt] = list(statement.orelse)
    block = parents.get(statement)
    for field in ("body", "orelse", "finalbody"):
        siblings = getattr(block, field, None)
        if isinstance(siblings, list) and statement in siblings:
            others += siblings[siblings.index(statement) + 1 : siblings.index(statement) + 2]
    return any(
        isinstance(other, ast.Return)
        and isinstance(other.value, ast.Name)
        and other.value.id == source.id
        for other in others
    )


def _only_tunes(parents: Mapping[ast.AST, ast.AST], node: ast.Compare) -> bool:
    """The gate's branches only pick numbers or narrow a config list (TransformerEngine's
    cuBLAS workspace size, a Triton autotune prune): on any GPU the same code runs."""
    child: ast.AST = node
    parent = parents.get(node)
    while isinstance(parent, (ast.BoolOp, ast.UnaryOp)):
        child, parent = parent, parents.get(parent)
    if isinstance(parent, ast.IfExp) and parent.test is child:
        return (
            _numbers_only(parent.body) and _numbers_only(parent.orelse) and _sized(parents, parent)
        )
    if isinstance(parent, ast.If) and parent.test is child:
        if _narrows_list(parent, parents):
            return True
        return _picks_numbers(parent.body, parents) and (
            not parent.orelse or _picks_numbers(parent.orelse, parents)
        )
    return False


# Calls that only show a value: an sm_XX name built for them drives nothing. (Not `append` or
# `write`: a flag list or a generated build file takes the name as an architecture.)
_RECORDING_CALLS = frozenset({"print", "debug", "info", "warning", "warn", "error", "log"})


def _only_labels(parents: Mapping[ast.AST, ast.AST], node: ast.JoinedStr) -> bool:
    """An ``sm_{major}{minor}`` f-string stored in a dict entry or passed to a log call: a
    label (a cache fingerprint, a report line), not an architecture a build or a kernel uses."""
    parent = parents.get(node)
    if isinstance(parent, ast.Dict):
        return node in parent.values
    if isinstance(parent, ast.Assign):
        # a record's entry (`fp["arch"] = …`), not the environment a build or a JIT reads
        # (`os.environ[…]`, `env[…]`)
        return all(
            isinstance(target, ast.Subscript) and "env" not in ast.unparse(target.value).lower()
            for target in parent.targets
        )
    if isinstance(parent, ast.Call) and node in parent.args:
        return called_name(parent) in _RECORDING_CALLS
    return False


def _stored_unread(parents: Mapping[ast.AST, ast.AST], node: ast.AST) -> bool:
    """The test's result goes into a function's local that the function never reads
    (``is_sm90 = major == 9 and minor == 0`` left over beside the flags it does use): it
    decides nothing, on any GPU."""
    child, parent = node, parents.get(node)
    while isinstance(parent, (ast.BoolOp, ast.UnaryOp)):
        child, parent = parent, parents.get(parent)
    stored = function_local(parents, child)
    if stored is None:
        return False
    name, function = stored
    for sub in ast.walk(function):
        if isinstance(sub, (ast.Global, ast.Nonlocal)) and name in sub.names:
            return False
        if isinstance(sub, ast.Name) and sub.id == name and not isinstance(sub.ctx, ast.Store):
            return False  # read here or in a nested function (a closure)
    return True


# Calls named for the CUDA toolkit's version (torchao's ``is_cuda_version_at_least(12, 8)``):
# they read torch.version.cuda, which is None on ROCm, so in a condition they are False there
# (GP202 reports them where they parse it without checking).
_CUDA_VERSION_CALL_RE = re.compile(r"(?i)cuda_?(?:toolkit_?|runtime_?)?version")
# Packages with no ROCm build as availability tests spell them (``HAS_DEEP_GEMM``,
# ``_cutedsl_runtime_available()``, ``caps = _get_deepgemm_capabilities()``), lower case with
# no underscores: DeepGEMM's kernels are SM90/SM100 only
# (https://github.com/deepseek-ai/DeepGEMM#requirements); CuTe DSL, TensorRT and PyCUDA are
# not-supported in kb/packages.toml (nvidia-cutlass-dsl, tensorrt, pycuda).
_NVIDIA_ONLY_PACKAGE_WORDS = ("deepgemm", "cutedsl", "cutlassdsl", "tensorrt", "pycuda")


def _assigned_in_scope(parents: Mapping[ast.AST, ast.AST], name: ast.Name) -> list[ast.AST]:
    """The values the function (or module) holding ``name`` assigns to it by ``name = …``,
    and for a value that calls a function of the module, that function."""
    scope = guards.scope_of(parents, name)
    values: list[ast.AST] = [
        sub.value
        for sub in walk_nodes(scope)
        if isinstance(sub, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == name.id for t in sub.targets)
    ]
    called = {v.func.id for v in values if isinstance(v, ast.Call) and isinstance(v.func, ast.Name)}
    if called:
        module: ast.AST | None = scope
        while module is not None and not isinstance(module, ast.Module):
            module = parents.get(module)
        for statement in getattr(module, "body", []):
            if isinstance(statement, ast.FunctionDef) and statement.name in called:
                values.append(statement)
    return values


def _off_rocm_part(parents: Mapping[ast.AST, ast.AST], part: ast.AST) -> bool:
    """A part of an ``and`` that is never true on ROCm: a call named for the CUDA version
    asked for at least some version (``is_cuda_version_at_least(12, 8)``, ``cuda_version() >=
    (12, 0)``), or a test that a package with no ROCm build is there (also through a name the
    function assigns from a call that names it). Negated, in an ``or``, or compared the other
    way (``not HAS_DEEP_GEMM``, ``not is_cuda_version_at_least(12, 8)``, ``cuda_version() <
    (12, 3)``) the part is true on ROCm instead, and decides nothing away (review24)."""
    if isinstance(part, ast.BoolOp):
        parts = [_off_rocm_part(parents, value) for value in part.values]
        return any(parts) if isinstance(part.op, ast.And) else all(parts)
    if isinstance(part, ast.Compare):
        if len(part.ops) != 1:
            return False
        op = part.ops[0]
        if isinstance(op, (ast.Gt, ast.GtE, ast.Eq)) and _version_call(part.left):
            return True
        if isinstance(op, ast.IsNot) and guards.none_compared(part, ast.IsNot) is part.left:
            return _package_probe(parents, part.left)
        return False
    if not isinstance(part, (ast.Name, ast.Attribute, ast.Call)):
        return False  # `not …` and anything else: may hold on ROCm
    return _version_call(part) or _package_probe(parents, part)


def _version_call(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and bool(
        _CUDA_VERSION_CALL_RE.search(called_name(node) or "")
    )


def _package_probe(parents: Mapping[ast.AST, ast.AST], part: ast.AST) -> bool:
    words = spelled(part, "_-")
    for sub in ast.walk(part):
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load):
            words += " " + " ".join(spelled(v, "_-") for v in _assigned_in_scope(parents, sub))
    return any(word in words for word in _NVIDIA_ONLY_PACKAGE_WORDS)


def _report_gate(
    ctx: PythonContext,
    node: ast.Compare,
    number: ast.expr,
    answer: Callable[[Capability], bool] | None,
    refusal: bool,
    turns_amd_away: bool,
) -> None:
    """GP203's finding for a capability comparison with ``number``: which AMD GPU it misleads,
    and how (a path for newer NVIDIA GPUs, or a refusal that turns AMD GPUs away or lets RDNA
    through)."""
    shown = ast.unparse(number)
    misled_gfx = misled(answer) if answer is not None else ()
    taken = (
        f"; it is {answer(misled_gfx[0])} for gfx {misled_gfx[0]}, as on no NVIDIA GPU before Ada"
        if answer is not None and misled_gfx
        else ""
    )
    outcome = "so an AMD GPU takes a path written for newer NVIDIA GPUs"
    if refusal:
        outcome = (
            "so the check turns an AMD GPU away from code an older NVIDIA GPU runs"
            if turns_amd_away
            else "so an RDNA GPU gets past a refusal that asks for Blackwell, and fails "
            "later on a path it lacks"
        )
    ctx.report(
        DEVICE_CAPABILITY_GATE,
        node,
        f"compares the CUDA compute capability with {shown}: on ROCm it is the gfx "
        f"version ((9, 4) for MI300, (11, 0) for RDNA3){taken}, {outcome}",
    )


@looks_at(DEVICE_CAPABILITY_GATE, nodes=(ast.Compare, ast.JoinedStr))
def device_capability_gate(ctx: PythonContext, node: ast.Compare | ast.JoinedStr) -> None:
    if ctx.imports_nvidia_only_dsl():
        return  # a CuTe DSL file never runs on ROCm: GP201 reports its import, once
    if isinstance(node, ast.JoinedStr):  # f"sm_{major}{minor}"
        written = "".join(literal(part) or "" for part in node.values)
        if "sm_" not in written and "compute_" not in written:
            return
        if (
            any(
                isinstance(part, ast.FormattedValue)
                and ctx.kind(part.value) is ValueKind.CAPABILITY
                for part in node.values
            )
            and not _only_labels(ctx.parents, node)
            and not guards.rocm_guarded(ctx.parents, node)
        ):
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
        answer = answers(node, kinds) if numbers else None
        if (
            numbers
            and (answer is None or misled(answer))
            and not _only_tunes(ctx.parents, node)
            and not guards.rocm_guarded(ctx.parents, node)
            and not _stored_unread(ctx.parents, node)
        ):
            refusal = only_refuses(ctx.parents, node)
            turns_amd_away = (
                refusal and answer is not None and refuses_amd(ctx.parents, node, answer)
            )
            # a refusal selects no code: reported only when it misleads an AMD GPU
            quiet_refusal = refusal and not turns_amd_away and not blackwell_for_amd(answer)
            if not quiet_refusal and not guards.decided_off_rocm(ctx.parents, node, _off_rocm_part):
                _report_gate(ctx, node, numbers[0], answer, refusal, turns_amd_away)
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
        "sit behind a ROCm test, are left alone, and so is a test whose branch only turns "
        "something off (sets a flag to False or None, warns, breaks out): a workaround for that "
        "NVIDIA product, which is rightly not applied on AMD."
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


def _turns_off(statement: ast.stmt) -> bool:
    """``flag = False``, ``x = None``, ``return False``, ``break``, a print or warning."""
    if isinstance(statement, (ast.Break, ast.Continue, ast.Pass)):
        return True
    if isinstance(statement, (ast.Assign, ast.AnnAssign, ast.Return)):
        value = statement.value
        return value is None or (isinstance(value, ast.Constant) and value.value in (False, None))
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
        return called_name(statement.value) in NOTICE_CALLS
    return False


def _only_disables(parents: Mapping[ast.AST, ast.AST], node: ast.AST) -> bool:
    """``if "GB10" in name: fast_path = False; break``: the test, when true, only turns
    something off for that NVIDIA product, so on AMD (false) the normal path runs. A negated
    test (``"NVIDIA" not in name``, ``name != "A100"``) is true on AMD: what it turns off is
    turned off there, so it is no such workaround."""
    if isinstance(node, ast.Compare) and any(
        isinstance(op, (ast.NotIn, ast.NotEq, ast.IsNot)) for op in node.ops
    ):
        return False
    child, parent = node, parents.get(node)
    while isinstance(parent, ast.BoolOp):
        child, parent = parent, parents.get(parent)
    if not isinstance(parent, ast.If) or parent.test is not child or parent.orelse:
        return False
    acts = [s for s in parent.body if not isinstance(s, (ast.Pass, ast.Expr))]
    return bool(acts) and all(_turns_off(s) for s in parent.body)


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
    if guards.rocm_guarded(ctx.parents, node) or _only_disables(ctx.parents, node):
        return
    if callers.only_called_on_cuda_side(ctx.parents, node):
        return  # in a helper every caller runs only on CUDA
    shown = ", ".join(repr(s) for s in strings[:3])
    ctx.report(
        DEVICE_NAME_MATCH,
        node,
        f"matches the GPU name against {shown}; on ROCm the name is AMD's "
        "('AMD Instinct MI300X'…), so the test is always false there",
    )
