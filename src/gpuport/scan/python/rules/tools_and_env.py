"""GP206, GP207 and GP208: NVIDIA command-line tools and CUDA/NCCL environment variables.

What a tool or a variable becomes on ROCm comes from the knowledge base (``kb.find_command``,
``kb.find_env_var``).
"""

from __future__ import annotations

import ast
import re

from gpuport import kb
from gpuport.findings import Category, Confidence, Severity
from gpuport.kb import python_code
from gpuport.rules import rule
from gpuport.scan.python import callers, guards, reach
from gpuport.scan.python.checks import EnvAccess, ShellCommand, looks_at
from gpuport.scan.python.context import PythonContext
from gpuport.scan.python.nodes import is_false, keyword_value, last_name
from gpuport.scan.python.nodes import walk as walk_nodes

# Calls that start a process, and the position of the command (or program) argument.
_PROCESS_CALLS: dict[str, int] = {
    "subprocess.run": 0,
    "subprocess.call": 0,
    "subprocess.check_call": 0,
    "subprocess.check_output": 0,
    "subprocess.Popen": 0,
    "subprocess.getoutput": 0,
    "subprocess.getstatusoutput": 0,
    "os.system": 0,
    "os.popen": 0,
    "os.execv": 0,
    "os.execve": 0,
    "os.execvp": 0,
    "os.execvpe": 0,
    "os.execl": 0,
    "os.execle": 0,
    "os.execlp": 0,
    "os.execlpe": 0,
    "os.spawnv": 1,
    "os.spawnve": 1,
    "os.spawnvp": 1,
    "os.spawnvpe": 1,
    "os.spawnl": 1,
    "os.spawnle": 1,
    "os.spawnlp": 1,
    "os.spawnlpe": 1,
    "asyncio.create_subprocess_exec": 0,
    "asyncio.create_subprocess_shell": 0,
    "shutil.which": 0,
    "pexpect.run": 0,
    "pexpect.spawn": 0,
}
_COMMAND_KEYWORDS = ("args", "cmd", "command", "file", "path")
# Words that only run the next word of a command line.
_COMMAND_WRAPPERS = frozenset(
    {"sudo", "env", "exec", "time", "nohup", "timeout", "watch", "bash", "sh", "zsh", "command"}
)
_SHELL_SEPARATORS = re.compile(r"\|\|?|&&|;|\$\(|`|[()\n]")
# AMD's tools are named so (hipcc, rocprofv3, amd-smi).
_ROCM_TOOL_RE = re.compile(r"^(?:hip|roc|amd)")


def _nvidia_tool(program: str) -> kb.ToolCommand | None:
    """The knowledge base's entry for ``program`` (a bare executable name) when it is an NVIDIA
    tool; None for anything else, AMD tools the table mentions (hipify-perl…) included."""
    entry = kb.find_command(program)
    if entry is None or program in entry.rocm_commands or _ROCM_TOOL_RE.match(program):
        return None
    return entry


# What ends a program's name in a command line as the source writes it: a blank, a quote, an
# escape (``\\n``), a shell separator (see _SHELL_SEPARATORS).
_WORD_ENDS = (" ", "\t", "\n", "\r", "\f", "\v", "'", '"', "\\", "|", "&", ";", "(", ")", "`")


def _tool_needles() -> tuple[str, ...]:
    """Every NVIDIA tool's name, at the end of a word: a command can start a tool only by
    writing its name, and short names (``ncu``) are common inside longer words."""
    names: set[str] = set()
    for entry in kb.commands().values():
        names.update(n for n in (entry.name, *entry.aliases) if not any(c.isspace() for c in n))
    tools = sorted(n for n in names if _nvidia_tool(n) is not None)
    return tuple(f"{tool}{end}" for tool in tools for end in _WORD_ENDS)


def _shell_script(words: list[str]) -> str | None:
    """The script of ``["bash", "-c", script]`` (also ``sh -lc``), else None."""
    if not words or words[0].rsplit("/", 1)[-1] not in ("bash", "sh", "zsh", "dash"):
        return None
    for position, word in enumerate(words[1:-1], start=1):
        if word.startswith("-") and "c" in word[1:] and not word.startswith("--"):
            return words[position + 1]
    return None


NVIDIA_TOOL_CALL = rule(
    id="GP206",
    slug="nvidia-tool-call",
    category=Category.PYTHON,
    severity=Severity.MEDIUM,
    confidence=Confidence.HIGH,
    summary="Runs an NVIDIA command-line tool (nvidia-smi, nvcc, nsys…) that ROCm machines lack",
    what=(
        "Finds `subprocess` calls, `os.system`, `os.popen`, `os.exec*`/`os.spawn*`, asyncio "
        "subprocesses and `shutil.which` whose command (a literal string, list or f-string) "
        "starts an NVIDIA tool: nvidia-smi, nvcc, nvprof, nsys, ncu, cuda-gdb, "
        "compute-sanitizer, cuobjdump, nvdisasm, dcgmi, deviceQuery. In notebooks, `!` shell "
        "lines and `%%bash` cells are read too. Left alone: a call under a ROCm test, in a "
        "function or module that also runs or looks for AMD's tools (amd-smi, rocm-smi, "
        "rocminfo, hipcc: multi-vendor detection), and a run inside a `try:` whose handler "
        "catches a missing program (bare `except`, `Exception`, `OSError`, "
        "`FileNotFoundError`) and carries on without raising: that code was written for "
        "machines without the tool and takes the same path on ROCm."
    ),
    why=(
        "These tools ship with the NVIDIA driver or CUDA toolkit and are not on a ROCm "
        "machine: the call raises FileNotFoundError or returns an error, and code that parses "
        "its output (GPU count, memory, utilisation) breaks. `shutil.which('nvidia-smi')` "
        "returns None, so code using it to detect a GPU decides there is none."
    ),
    example=(
        "out = subprocess.check_output(['nvidia-smi', '--query-gpu=memory.used', '--format=csv'])\n"
    ),
    instead=(
        "# amd-smi (rocm-smi on older releases), hipcc, rocprofv3, rocprof-compute, rocgdb,\n"
        "# rocminfo; or, vendor-neutral, ask PyTorch:\n"
        "free, total = torch.cuda.mem_get_info()\n"
    ),
    fix=(
        "Call the ROCm tool named in the finding (its options and output format differ), or "
        "get the information from PyTorch's torch.cuda API, which works on both."
    ),
    mechanical=False,
    references=(
        "https://rocm.docs.amd.com/projects/amdsmi/en/latest/",
        "https://rocm.docs.amd.com/en/latest/compatibility/compatibility-matrix.html",
    ),
    needles=_tool_needles(),
)


@looks_at(NVIDIA_TOOL_CALL, calls=tuple(_PROCESS_CALLS), events=(ShellCommand,))
def nvidia_tool_call(ctx: PythonContext, subject: ast.Call | ShellCommand) -> None:
    def tools_in(text: str, first_only: bool = False) -> list[tuple[str, kb.ToolCommand]]:
        """NVIDIA tools in command position in a command line (``watch -n1 nvidia-smi | …``)."""
        found: list[tuple[str, kb.ToolCommand]] = []
        segments = [text] if first_only else _SHELL_SEPARATORS.split(text)
        for segment in segments:
            words = segment.replace('"', " ").replace("'", " ").split()
            for word in words:
                if "=" in word and not word.startswith("-"):
                    continue  # VAR=value before the command
                base = word.rsplit("/", 1)[-1]
                if base in _COMMAND_WRAPPERS or word.startswith("-") or word.isdigit():
                    continue
                entry = _nvidia_tool(base)
                if entry is not None and base not in (f[0] for f in found):
                    found.append((base, entry))
                break
        return found

    def command_text(node: ast.AST | None) -> str:
        """The literal parts of a command: a string, a list of strings, an f-string…"""
        if node is None:
            return ""
        if isinstance(node, ast.Call) and ctx.qual(node.func) == "shlex.split" and node.args:
            return command_text(node.args[0])
        return ctx.string_value(node) or ""

    def report(line: int, column: int, tool: str, entry: kb.ToolCommand, runs: bool) -> None:
        head = f"runs {tool}" if runs else f"looks for {tool} on PATH"
        ctx.report(
            NVIDIA_TOOL_CALL,
            (line, column),
            f"{head}, which ROCm machines do not have; on ROCm use {entry.rocm_equivalent}",
            key=tool,
            references=entry.sources,
        )

    if isinstance(subject, ShellCommand):  # a notebook's `!nvidia-smi`
        for tool, entry in tools_in(subject.command):
            report(subject.line, 0, tool, entry, runs=True)
        return
    qual = ctx.qual(subject.func) or ""
    position = _PROCESS_CALLS[qual]
    command: ast.AST | None = subject.args[position] if len(subject.args) > position else None
    if command is None:
        command = next((kw.value for kw in subject.keywords if kw.arg in _COMMAND_KEYWORDS), None)
    looks_up = qual == "shutil.which"
    if isinstance(command, (ast.List, ast.Tuple)):
        # exec form: the program is the first word (after sudo, timeout…), unless it is a
        # shell given a script with -c
        words = [command_text(element) or "…" for element in command.elts]
        script = _shell_script(words)
        text, first_only = (script, False) if script is not None else (" ".join(words), True)
    else:
        text, first_only = command_text(command), looks_up
    if not text:
        return
    tools = tools_in(text, first_only=first_only)
    if not tools or _probes_amd_too(ctx, subject):
        return
    if not looks_up and reach.missing_program_handled(ctx.parents, subject):
        return  # written for machines without the tool: on ROCm it takes that path
    if callers.only_called_on_cuda_side(ctx.parents, subject):
        return  # in a helper every caller runs only on CUDA (the else of `if is_rocm:`)
    for tool, entry in tools:
        report(subject.lineno, subject.col_offset + 1, tool, entry, runs=not looks_up)


def _variable(name: str) -> kb.EnvVar | None:
    """The knowledge base's own entry for variable ``name`` (not a family's, such as NCCL_*)."""
    entry = kb.find_env_var(name)
    return entry if entry is not None and entry.name == name else None


CUDA_ENV_VAR = rule(
    id="GP207",
    slug="cuda-env-var",
    category=Category.PYTHON,
    severity=Severity.LOW,
    confidence=Confidence.HIGH,
    summary="Reads or sets a CUDA environment variable that ROCm spells differently",
    what=(
        "Finds `os.environ[...]`, `os.environ.get/setdefault/pop/update`, `os.getenv`, "
        "`os.putenv`, `name in os.environ`, `env=` dictionaries given to calls, copies of "
        "`os.environ`, and notebook `%env` lines, for CUDA-side variables whose name ROCm does "
        "not read, as listed in gpuport's knowledge base: CUDA_VISIBLE_DEVICES, "
        "NVIDIA_VISIBLE_DEVICES, CUDA_LAUNCH_BLOCKING, TORCH_CUDA_ARCH_LIST, CUDA_HOME, "
        "CUDA_PATH, CUDA_DEVICE_ORDER and others. Variables the knowledge base marks as still "
        "honoured on ROCm are left alone, and so are accesses that run only where CUDA is "
        "(under `if CUDA_HOME is not None:` or `if torch.version.cuda:`, or after `if not "
        "torch.version.cuda: return`), and so is setting a variable ROCm never reads and "
        "needs nothing in place of (TORCH_CUDA_ARCH_LIST, which PyTorch's extension builder "
        "reads only for nvcc; CUDA_MODULE_LOADING; CUDA_DEVICE_ORDER), and reading "
        "CUDA_VISIBLE_DEVICES, which HIP reads with the same meaning (the code sees what the "
        "user set), and an access that comes, in a `try:`, after starting an NVIDIA tool "
        'from an argument list (`subprocess.run(["nvidia-smi", …])`) whose missing '
        "program the handler copes with: on ROCm the start raises first. Reading "
        "CUDA_HOME/CUDA_PATH is MEDIUM: they are unset on ROCm machines."
    ),
    why=(
        "ROCm selects GPUs with HIP_VISIBLE_DEVICES (HIP) and ROCR_VISIBLE_DEVICES (the whole "
        "stack; AMD recommends it on Linux). HIP up to ROCm 7.x also reads "
        "CUDA_VISIBLE_DEVICES with the same meaning, so code that reads it sees the mask the "
        "user set (and where ROCR_VISIBLE_DEVICES filters instead, the devices are already "
        "renumbered from 0); but AMD's later documentation drops the CUDA name, so code that "
        "sets it to pick GPUs should set the ROCm names too, and indices are relative when "
        "both are set. Kernel serialisation is AMD_SERIALIZE_KERNEL / "
        "HIP_LAUNCH_BLOCKING, extension builds read PYTORCH_ROCM_ARCH (gfx names) instead of "
        "TORCH_CUDA_ARCH_LIST, and the toolkit lives in ROCM_PATH/ROCM_HOME (/opt/rocm), "
        "not CUDA_HOME."
    ),
    example=(
        "os.environ['CUDA_VISIBLE_DEVICES'] = str(local_rank)\n"
        "include = os.path.join(os.environ['CUDA_HOME'], 'include')\n"
    ),
    instead=(
        "os.environ['CUDA_VISIBLE_DEVICES'] = os.environ['HIP_VISIBLE_DEVICES'] = str(local_rank)\n"
        "home = os.environ.get('ROCM_PATH', '/opt/rocm') if torch.version.hip else os.environ['CUDA_HOME']\n"
    ),
    fix=(
        "Read the ROCm names as well (or ask torch.cuda.device_count()), and set "
        "HIP_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES, PYTORCH_ROCM_ARCH or ROCM_PATH on ROCm."
    ),
    mechanical=False,
    references=(
        "https://rocm.docs.amd.com/projects/HIP/en/docs-6.4.0/reference/env_variables.html",
        "https://rocm.docs.amd.com/en/latest/conceptual/gpu-isolation.html",
        "https://github.com/pytorch/pytorch/issues/132570",
    ),
    needles=("CUDA", "NVIDIA"),
)


# AMD's tools: a function that also runs or looks for one of them handles both vendors.
_AMD_TOOL_RE = re.compile(r"\b(?:amd-smi|amdsmi|rocm-smi|rocminfo|hipcc|hipconfig|rocprof\w*)\b")
# A command for one of AMD's tools, as a literal: the program alone (or its path), or followed by
# options ("rocm-smi --showmeminfo vram"), not prose that names it ("amd-smi reads sysfs").
_AMD_COMMAND_RE = re.compile(
    r"(?:\S*[/\\])?(?:amd-smi|rocm-smi|rocminfo|rocm_agent_enumerator|hipcc|hipconfig|hipinfo"
    r"|rocprof\w*)(?:\.exe)?(?:\s+-.*)?",
    re.IGNORECASE | re.DOTALL,
)


def _probes_amd_too(ctx: PythonContext, call: ast.Call) -> bool:
    """The call is one vendor's half of code that handles both: it sits under a ROCm guard, in
    a function that also asks for AMD's tools or tests for ROCm, or in a module that also runs
    or looks for an AMD tool (multi-vendor GPU detection split into an NVIDIA and an AMD helper,
    tried one after the other)."""
    if guards.rocm_guarded(ctx.parents, call):
        return True
    if reach.module_has_string(ctx.parents, call, _AMD_COMMAND_RE):
        return True
    scope = guards.scope_of(ctx.parents, call)
    if isinstance(scope, ast.Module):
        return False
    return any(
        isinstance(sub, ast.Constant)
        and isinstance(sub.value, str)
        and _AMD_TOOL_RE.search(sub.value)
        for sub in walk_nodes(scope)
    )


_TOOLKIT_VARIABLES = frozenset({"CUDA_HOME", "CUDA_PATH"})


def _handles_rocm_too(ctx: PythonContext, node: ast.AST, entry: kb.EnvVar | None) -> bool:
    """The access sits in ROCm-aware code: under a ROCm guard, or in a function that also
    names the variable's ROCm counterpart (``HIP_VISIBLE_DEVICES`` read beside
    ``CUDA_VISIBLE_DEVICES``). A module is too wide a scope to say so."""
    if guards.rocm_guarded(ctx.parents, node):
        return True
    # ROCm skips this CUDA-only setup altogether. A toolkit test does not excuse looking up
    # the toolkit itself (CUDA_HOME read under `if os.getenv("CUDA_HOME"):`): that lookup is
    # the ROCm path discovery a port must add.
    toolkit = entry is None or entry.name not in _TOOLKIT_VARIABLES
    if reach.runs_only_with_cuda(ctx.parents, node, toolkit=toolkit):
        return True
    rocm_names = set(entry.rocm_names) if entry is not None else set()
    if not rocm_names:
        return False
    scope = guards.scope_of(ctx.parents, node)
    if isinstance(scope, ast.Module):
        return False
    return any(
        isinstance(sub, ast.Constant) and sub.value in rocm_names for sub in walk_nodes(scope)
    )


def _reads(node: ast.AST, name: str) -> bool:
    """``node`` reads variable ``name``: ``os.getenv("X")``, ``os.environ.get("X")``,
    ``os.environ["X"]``."""
    if isinstance(node, ast.Call):
        first = node.args[0] if node.args else None
        return (
            isinstance(first, ast.Constant)
            and first.value == name
            and last_name(node.func) in ("get", "getenv")
        )
    if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
        return isinstance(node.slice, ast.Constant) and node.slice.value == name
    return False


def _test_of(ctx: PythonContext, node: ast.AST) -> ast.If | None:
    """The ``if`` whose test holds ``node``, within its statement."""
    for child, parent in guards.ancestors(ctx.parents, node):
        if isinstance(parent, ast.If):
            return parent if parent.test is child else None
        if isinstance(parent, ast.stmt):
            return None
    return None


def _tested_above(ctx: PythonContext, node: ast.AST, name: str) -> bool:
    """``node`` reads ``name`` in the body of an ``if`` whose own test reads it (``if
    os.getenv("CUDA_HOME"): home = Path(os.getenv("CUDA_HOME"))``): the read is the same
    lookup as the test's, one edit with it; the test's finding counts it."""
    for child, parent in guards.ancestors(ctx.parents, node):
        if (
            isinstance(parent, ast.If)
            and child in parent.body
            and any(_reads(sub, name) for sub in ast.walk(parent.test))
        ):
            return True
        if isinstance(parent, guards.SCOPE_NODES):
            return False
    return False


def _read_again_below(ctx: PythonContext, node: ast.AST, name: str) -> list[int]:
    """The lines where the body of the ``if`` whose test reads ``name`` at ``node`` reads it
    again (:func:`_tested_above` leaves those)."""
    statement = _test_of(ctx, node)
    if statement is None:
        return []
    at = getattr(node, "lineno", 0)
    lines = {
        getattr(sub, "lineno", 0)
        for body in statement.body
        for sub in ast.walk(body)
        if _reads(sub, name) and getattr(sub, "lineno", 0) != at
    }
    return sorted(lines)


def _first_in_statement(ctx: PythonContext, node: ast.AST) -> bool:
    """The first CUDA variable access of its statement: one finding stands for a statement
    that names several (``(os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"))``, one
    search list: one decision, where to find ROCm's path instead)."""
    statement: ast.stmt | None = node if isinstance(node, ast.stmt) else None
    statement = statement or next(
        (
            parent
            for _, parent in guards.ancestors(ctx.parents, node)
            if isinstance(parent, ast.stmt)
        ),
        None,
    )
    if statement is None or isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return True
    return ctx.first_time(CUDA_ENV_VAR, f"statement:{statement.lineno}:{statement.col_offset}")


@looks_at(CUDA_ENV_VAR, events=(EnvAccess,))
def cuda_env_var(ctx: PythonContext, access: EnvAccess) -> None:
    name = access.name
    if name.startswith("NCCL_") or ("CUDA" not in name and "NVIDIA" not in name):
        return  # GP208's, or ROCm's own or vendor-neutral variables
    entry = _variable(name)
    if entry is not None and entry.honoured_on_rocm:
        return  # the CUDA name still works on ROCm
    severities = python_code.env_severities().get(name)
    if entry is None and severities is None:
        return
    if access.write and severities is not None and severities.write_ignored:
        return  # ROCm never reads it and needs nothing in its place: setting it is harmless
    if not access.write and severities is not None and severities.read_honoured:
        return  # HIP reads the same name: the code sees what the user set, as on CUDA
    if access.node is not None and _handles_rocm_too(ctx, access.node, entry):
        return
    if access.node is not None and not _first_in_statement(ctx, access.node):
        return
    if access.node is not None and callers.only_called_on_cuda_side(ctx.parents, access.node):
        return  # in a helper every caller runs only on CUDA (the else of `if is_rocm:`)
    if access.node is not None and not access.write and _tested_above(ctx, access.node, name):
        return  # counted on the finding of the `if` that tests the same variable
    if access.node is not None and _after_missing_nvidia_tool(ctx, access.node):
        return  # on ROCm the NVIDIA tool started above raises first: never reached there
    read_severity = Severity.parse(severities.read) if severities else Severity.LOW
    write_severity = Severity.parse(severities.write) if severities else Severity.LOW
    if entry is None:
        detail = "ROCm uses other names (see `gpuport explain GP207`)"
    elif entry.rocm_equivalent:
        detail = f"on ROCm: {entry.rocm_equivalent}"
    else:
        detail = "ROCm has no counterpart"
    fix = None
    if entry is not None:
        names = ", ".join(entry.rocm_names)
        if names:
            fix = f"{'Set' if access.write else 'Read'} {names} on ROCm. {entry.notes}".strip()
        elif entry.notes:
            fix = entry.notes
    again = _read_again_below(ctx, access.node, name) if access.node is not None else []
    if again:
        lines = ", ".join(str(line) for line in again)
        detail += f"; read again in this if's body on line {lines}: the same one edit"
    ctx.report(
        CUDA_ENV_VAR,
        (access.line, access.column),
        f"{'sets' if access.write else 'reads'} {name}: {detail}",
        key=name,
        severity=write_severity if access.write else read_severity,
        fix=fix,
        references=entry.sources if entry else (),
    )


NCCL_ENV_VAR = rule(
    id="GP208",
    slug="nccl-env-var",
    category=Category.PYTHON,
    severity=Severity.INFO,
    confidence=Confidence.HIGH,
    summary="Sets or reads an NCCL_* variable; RCCL reads most of them, some mean nothing there",
    what=(
        "Finds the same kinds of environment access as GP207 for names starting with NCCL_. "
        "It reports, once per file and at INFO, setting a tuning variable whose value was "
        "chosen for an NVIDIA system (NCCL_ALGO, NCCL_PROTO, NCCL_MAX_NCHANNELS, NCCL_P2P_*…), "
        "and at LOW reading a variable that tunes NVIDIA-only fabric (NVLink SHARP / NVLS, "
        "multi-node NVLink, CollNet), which a ROCm machine never sets. Not reported: reading "
        "a variable RCCL also reads (the code sees what the user set, as on CUDA); setting one "
        "that describes the machine or the logging, which RCCL reads with the same meaning "
        "(NCCL_SOCKET_*, NCCL_IB_*, NCCL_DEBUG*, NCCL_HOSTID, NCCL_CONF_FILE, PyTorch's "
        "NCCL_ASYNC_ERROR_HANDLING); setting a fabric switch, which RCCL never reads and "
        "which changes only how collectives travel; and build locations (NCCL_HOME, "
        "NCCL_ROOT, NCCL_*_DIR), which no library reads; and setting a tuning variable to a "
        'value the code only passes on (`os.putenv("NCCL_MAX_NCHANNELS", str(channels))`): '
        "RCCL reads it with the same meaning, and the number is the caller's choice."
    ),
    why=(
        "On ROCm, `torch.distributed`'s 'nccl' backend is RCCL, which reads the NCCL_* names "
        "(NCCL_DEBUG, NCCL_SOCKET_IFNAME, NCCL_IB_*, NCCL_ALGO, NCCL_PROTO…) and adds RCCL_* "
        "ones. Values tuned for an NVIDIA topology may not suit an AMD one (Infinity Fabric, "
        "xGMI), and NVLS / MNNVL / CollNet switches have no effect."
    ),
    example=(
        "os.environ['NCCL_ALGO'] = 'NVLSTree'\n"
        "use_nvls = os.environ.get('NCCL_NVLS_ENABLE', '1') == '1'\n"
    ),
    instead=(
        "os.environ.setdefault('NCCL_DEBUG', 'WARN')  # RCCL reads it too; let it pick the algorithm\n"
        "use_nvls = torch.version.hip is None and os.environ.get('NCCL_NVLS_ENABLE', '1') == '1'\n"
    ),
    fix=(
        "Keep the NCCL_* variables RCCL documents, drop NVIDIA-fabric ones, and re-tune "
        "algorithm/protocol choices on the AMD system."
    ),
    mechanical=False,
    references=(
        "https://rocm.docs.amd.com/projects/rccl/en/latest/api-reference/env-variables.html",
    ),
    needles=("NCCL_",),
)


def _same_on_rccl(name: str) -> bool:
    """``name`` describes the machine or the logging (NCCL_SOCKET_IFNAME, NCCL_IB_HCA,
    NCCL_DEBUG), and RCCL reads it with the same meaning; or it is a build location
    (NCCL_HOME), which no library reads."""
    return name.startswith(
        tuple(same.prefix for same in python_code.nccl_same_meaning_prefixes())
    ) or name.endswith(tuple(build.suffix for build in python_code.nccl_build_location_suffixes()))


def _value_set(ctx: PythonContext, node: ast.AST | None) -> ast.AST | None:
    """The value an environment write stores: ``os.putenv(name, value)``,
    ``os.environ.setdefault(name, value)``, ``os.environ[name] = value``, ``{name: value}``,
    ``dict(NAME=value)``; None when it cannot be told."""
    if isinstance(node, ast.Call):
        if len(node.args) > 1:
            return node.args[1]
        return next((kw.value for kw in node.keywords if kw.arg in ("value", "default")), None)
    parent = ctx.parents.get(node) if node is not None else None
    if isinstance(node, ast.Subscript) and isinstance(parent, ast.Assign):
        return parent.value
    if isinstance(parent, ast.Dict) and node in parent.keys:
        return parent.values[parent.keys.index(node)]
    if isinstance(parent, ast.keyword):
        return node
    return None


def _passes_a_value_through(value: ast.AST | None) -> bool:
    """``value`` holds no literal (``str(channels)``, ``f"{n}"``, ``args.algo``): the code
    hands on what its caller or configuration chose, rather than a value picked for an NVIDIA
    system."""
    return value is not None and not any(
        isinstance(sub, ast.Constant) and sub.value is not None for sub in ast.walk(value)
    )


@looks_at(NCCL_ENV_VAR, events=(EnvAccess,))
def nccl_env_var(ctx: PythonContext, access: EnvAccess) -> None:
    name = access.name
    if not name.startswith("NCCL_"):
        return
    entry = _variable(name)
    verb = "sets" if access.write else "reads"
    fabric = (entry is not None and not entry.honoured_on_rocm) or any(
        name.startswith(fabric.prefix) for fabric in python_code.nccl_fabric_prefixes()
    )
    if fabric and access.write:
        # RCCL never reads it, and the switch only picks how collectives travel (the results
        # are the same): the program runs as on an NVIDIA machine without that fabric
        return
    if fabric:
        message = f"{verb} {name}: RCCL has no such setting, so it does nothing on ROCm"
    elif not access.write:
        return  # RCCL reads the same name: the code reads what the user set, as on CUDA
    elif _same_on_rccl(name):
        return  # the same setting on RCCL (or a build path no library reads)
    elif _passes_a_value_through(_value_set(ctx, access.node)):
        return  # RCCL reads the name, and the value is the user's choice, not NVIDIA-tuned
    elif not ctx.first_time(NCCL_ENV_VAR, name):
        return  # told once per file
    else:
        message = (
            f"{verb} {name}: RCCL reads the NCCL_* names too; check the value suits the AMD system"
        )
    ctx.report(
        NCCL_ENV_VAR,
        (access.line, access.column),
        message,
        key=name,
        severity=Severity.LOW if fabric else Severity.INFO,
        fix=entry.notes if entry is not None and entry.notes else None,
        references=entry.sources if entry else (),
    )


# Calls that start a program from an argument list and raise FileNotFoundError when it is not
# installed (no shell in between: `subprocess.run("nvidia-smi", shell=True)` returns 127).
_STARTS_FROM_LIST = frozenset({"run", "check_output", "check_call", "call", "Popen"})


def _starts_nvidia_tool(ctx: PythonContext, call: ast.AST) -> bool:
    """``call`` starts an NVIDIA tool from a literal argument list: ``subprocess.run(["nvidia-smi",
    …])``, with no ``shell=True``."""
    if not (isinstance(call, ast.Call) and last_name(call.func) in _STARTS_FROM_LIST):
        return False
    command = call.args[0] if call.args else keyword_value(call, "args")
    if not isinstance(command, (ast.List, ast.Tuple)) or not command.elts:
        return False
    shell = keyword_value(call, "shell")
    if shell is not None and not is_false(shell):
        return False
    program = ctx.string_value(command.elts[0])
    return program is not None and _nvidia_tool(program.rsplit("/", 1)[-1]) is not None


def _after_missing_nvidia_tool(ctx: PythonContext, node: ast.AST) -> bool:
    """``node`` comes, in the body of a ``try:`` in its own function, after a statement that
    starts an NVIDIA tool from an argument list (``subprocess.run(["nvidia-smi", …])``), and a
    handler of that ``try:`` catches a program that is not installed and carries on
    (:func:`reach.missing_program_handled`). On ROCm the tool is missing, the start raises
    FileNotFoundError, and the handler's path runs instead: ``node`` is never reached there,
    and the tool call is the one thing to look at (GP206 leaves it alone for the same
    reason)."""
    for child, parent in guards.ancestors(ctx.parents, node):
        if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            return False
        if not (isinstance(parent, (ast.Try, ast.TryStar)) and child in parent.body):
            continue
        for statement in parent.body[: parent.body.index(child)]:
            if not isinstance(statement, (ast.Expr, ast.Assign, ast.AnnAssign, ast.AugAssign)):
                # a start under an `if`/`for`/`with` may not run (`if shutil.which("nvidia-smi"):`
                # is False on ROCm): the read after it then runs there (review24)
                continue
            for sub in ast.walk(statement):
                if _starts_nvidia_tool(ctx, sub) and reach.missing_program_handled(
                    ctx.parents, sub
                ):
                    return True
    return False
