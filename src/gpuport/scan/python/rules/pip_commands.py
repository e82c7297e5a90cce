"""GP219: Python code that runs pip with the ROCm PyTorch index beside PyPI."""

from __future__ import annotations

import ast
import re

from gpuport.findings import Category, Confidence, Severity
from gpuport.rules import rule
from gpuport.scan.python import guards
from gpuport.scan.python.checks import looks_at
from gpuport.scan.python.context import PythonContext

_EXTRA = "--extra-index-url"
# A ROCm wheel index: PyTorch's whl/rocmX.Y (also nightly), AMD's repo.radeon.com wheels.
_ROCM_INDEX_RE = re.compile(r"(?i)https?://\S*(?:/rocm|repo\.radeon\.com)")
# The option and its URL in one string: "--extra-index-url https://…/rocm6.4", "…=https://…".
_OPTION_RE = re.compile(r"--extra-index-url[= ]+(\S+)")
# A ROCm build pinned by its label (torch==2.7.1+rocm6.3): then PyPI cannot win.
_ROCM_LABEL_RE = re.compile(r"\+rocm")

ROCM_INDEX_AS_EXTRA_IN_CODE = rule(
    id="GP219",
    slug="rocm-index-as-extra-in-code",
    category=Category.PYTHON,
    severity=Severity.MEDIUM,
    confidence=Confidence.MEDIUM,
    summary="Python runs pip with the ROCm PyTorch index as an extra index beside PyPI",
    what=(
        "Finds `--extra-index-url` followed by a ROCm wheel index (download.pytorch.org/whl/"
        "rocmX.Y, repo.radeon.com) in a pip argument list or command string built in Python "
        "(installers, launchers, `subprocess` calls), unless the same list pins a `+rocm` "
        "build. GP103 reports the same in requirement files."
    ),
    why=(
        "pip merges an extra index with PyPI and takes the highest version it finds. PyPI "
        "usually has a newer torch than the ROCm index (or the only build of the requested "
        "version), so pip installs PyPI's torch, which on Linux is the CUDA build, and the "
        "AMD install ends up without GPU support."
    ),
    example=(
        "cmd = [sys.executable, '-m', 'pip', 'install', 'torch',\n"
        "       '--extra-index-url', 'https://download.pytorch.org/whl/rocm6.4']\n"
    ),
    instead=(
        "cmd = [sys.executable, '-m', 'pip', 'install', 'torch',\n"
        "       '--index-url', 'https://download.pytorch.org/whl/rocm6.4']\n"
    ),
    fix=(
        "Pass the ROCm index with `--index-url` for the PyTorch packages (install other "
        "packages in a second pip call), or pin them with the index's `+rocmX.Y` label."
    ),
    mechanical=False,
    references=(
        "https://pip.pypa.io/en/stable/cli/pip_install/#cmdoption-extra-index-url",
        "https://github.com/Comfy-Org/comfy-cli/pull/379",
    ),
    needles=(_EXTRA,),
)


def _pins_rocm(words: list[str]) -> bool:
    return any(_ROCM_LABEL_RE.search(word) for word in words)


def _word(ctx: PythonContext, node: ast.expr, where: ast.AST) -> str:
    """A string argument's text; a local name is looked up in the enclosing function's
    assignments (``index = f"…/rocm{v}"`` then ``pip(…, "--extra-index-url", index)``)."""
    text = ctx.string_value(node)
    if text is None and isinstance(node, ast.Name):
        scope = guards.scope_of(ctx.parents, where)
        for sub in ast.walk(scope):
            if isinstance(sub, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == node.id for t in sub.targets
            ):
                text = ctx.string_value(sub.value)
                if text is not None:
                    break
    return text or ""


@looks_at(
    ROCM_INDEX_AS_EXTRA_IN_CODE,
    nodes=(ast.List, ast.Tuple, ast.Constant, ast.JoinedStr),
    every_call=True,
)
def rocm_index_as_extra_in_code(
    ctx: PythonContext, node: ast.List | ast.Tuple | ast.Constant | ast.JoinedStr | ast.Call
) -> None:
    def report(at: ast.AST, url: str) -> None:
        ctx.report(
            ROCM_INDEX_AS_EXTRA_IN_CODE,
            at,
            f"pip gets the ROCm index {url} as --extra-index-url beside PyPI: pip takes the "
            "highest torch of both, often PyPI's CUDA build; use --index-url",
            key="extra-index",
        )

    if isinstance(node, (ast.List, ast.Tuple, ast.Call)):
        elements = node.args if isinstance(node, ast.Call) else node.elts
        texts = [ctx.string_value(e) or "" for e in elements]
        if not any(t.startswith(_EXTRA) for t in texts):
            return
        words = [_word(ctx, e, node) for e in elements]  # the node's parents are known
        if _pins_rocm(words):
            return
        for position, word in enumerate(words):
            url = ""
            if word == _EXTRA and position + 1 < len(words):
                url = words[position + 1]
            elif found := _OPTION_RE.search(word):
                url = found.group(1)
            if _ROCM_INDEX_RE.match(url):
                report(elements[position], url)
                return
        return
    text = ctx.string_value(node)  # one command line: "pip install torch --extra-index-url …"
    if not text or _EXTRA not in text or _ROCM_LABEL_RE.search(text):
        return
    found = _OPTION_RE.search(text)
    if found and _ROCM_INDEX_RE.match(found.group(1)):
        report(node, found.group(1))
