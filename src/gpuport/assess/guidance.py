"""What ``assess`` tells a reader to do: the ROCm path a project already has, and next steps.

Three pieces, each from facts gpuport holds rather than guesses: how a project that already
builds for ROCm is built or installed for the reader's GPU (the project model's evidence, and
the knowledge base's answer when the project is a known package), whether its ROCm build covers
the AMD GPUs current ROCm releases support (kb/gpu_arch.toml), and numbered next steps that name
only commands ``gpuport`` has (checks it does not have yet are worded as the check to make).
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable
from dataclasses import dataclass

from gpuport import kb
from gpuport.findings import Confidence, Finding, Severity
from gpuport.project.model import ComponentStatus, Evidence, ProjectModel

# How much a finding's severity and the rule's confidence weigh when reasons are ordered:
# a blocker the rule is unsure of ranks with a sure high-severity finding, not above it.
SEVERITY_WEIGHT = {
    Severity.INFO: 0.0,
    Severity.LOW: 1.0,
    Severity.MEDIUM: 2.0,
    Severity.HIGH: 4.0,
    Severity.BLOCKER: 8.0,
}
CONFIDENCE_WEIGHT = {Confidence.LOW: 0.5, Confidence.MEDIUM: 0.75, Confidence.HIGH: 1.0}
MAX_EVIDENCE = 3  # evidence lines a verdict shows; the JSON carries them all
MAX_MANUAL_STEPS = 3  # findings named one by one in the next steps


def weight(finding: Finding) -> float:
    """Severity times confidence: the order reasons and top items are listed in."""
    return SEVERITY_WEIGHT[finding.severity] * CONFIDENCE_WEIGHT[finding.confidence]


def by_weight(findings: Iterable[Finding]) -> list[Finding]:
    """Findings heaviest first; ties most severe first, then in file order."""
    return sorted(findings, key=lambda f: (-weight(f), -f.severity, f.sort_key))


@dataclass(frozen=True, slots=True)
class ArchCoverage:
    """Which of the AMD GPUs current ROCm supports the project's ROCm build compiles for."""

    named: tuple[str, ...]  # the gfx targets its build names ("" tuple: it names none)
    instinct_covered: tuple[str, ...]
    instinct_missing: tuple[str, ...]
    radeon_covered: tuple[str, ...]
    radeon_missing: tuple[str, ...]

    @property
    def summary(self) -> str:
        if not self.named:
            return (
                "its build names no GPU targets: it compiles for the GPU it finds, or its "
                "toolchain's default list; set the target of your GPU when you build "
                "(PYTORCH_ROCM_ARCH for a PyTorch extension)"
            )
        parts = [f"its ROCm build targets {', '.join(self.named)}"]
        if self.missing:
            parts.append(f"current ROCm GPUs it leaves out: {_products(self.missing)}")
        else:
            parts.append("every Instinct and Radeon GPU current ROCm supports")
        return "; ".join(parts)

    @property
    def missing(self) -> tuple[str, ...]:
        return self.instinct_missing + self.radeon_missing


def _products(gfx_ids: tuple[str, ...]) -> str:
    archs = kb.gpu_architectures()
    return ", ".join(
        f"{gfx} ({archs[gfx].products[0]})" if gfx in archs else gfx for gfx in gfx_ids
    )


def current_targets() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(Instinct, Radeon) gfx ids that AMD's current ROCm support matrix lists (kb/gpu_arch)."""
    instinct: list[str] = []
    radeon: list[str] = []
    for arch in kb.gpu_architectures().values():
        if not arch.officially_supported or "APU" in arch.family:
            continue
        if arch.family.startswith("CDNA"):
            instinct.append(arch.gfx)
        elif arch.family.startswith("RDNA"):
            radeon.append(arch.gfx)
    return tuple(instinct), tuple(radeon)


def arch_coverage(named: tuple[str, ...]) -> ArchCoverage:
    """How ``named`` (gfx targets, with or without feature suffixes) covers current GPUs."""
    ids = tuple(dict.fromkeys(n.strip().lower().split(":", 1)[0] for n in named if n.strip()))
    instinct, radeon = current_targets()
    return ArchCoverage(
        named=ids,
        instinct_covered=tuple(g for g in instinct if g in ids),
        instinct_missing=tuple(g for g in instinct if g not in ids) if ids else (),
        radeon_covered=tuple(g for g in radeon if g in ids),
        radeon_missing=tuple(g for g in radeon if g not in ids) if ids else (),
    )


@dataclass(frozen=True, slots=True)
class RocmSupport:
    """A project that already builds or ships for ROCm: the proof, and how to get its build."""

    evidence: tuple[Evidence, ...]
    how: str  # one or two sentences: how to install or build it for ROCm
    package: str  # the knowledge base entry it matched ("" when none)
    index: str  # the pip index the KB names for its ROCm build ("" when none)
    coverage: ArchCoverage


def rocm_support(model: ProjectModel) -> RocmSupport | None:
    """What the project model and the KB say about a project's own ROCm path; None without one."""
    if not model.supports_rocm:
        return None
    package = kb.find_package(model.name) if model.name else None
    if package is not None:
        how = f"{model.name} is a known package: {package.instead.rstrip('.')}."
        index = package.index_for(kb.DEFAULT_ROCM_VERSION) or ""
    else:
        how = build_how(model.rocm_support)
        index = ""
    return RocmSupport(
        evidence=model.rocm_support,
        how=how,
        package=package.name if package is not None else "",
        index=index,
        coverage=arch_coverage(model.rocm_archs),
    )


def rocm_elsewhere(model: ProjectModel) -> str:
    """The KB's answer for a project that is a known package whose ROCm build lives elsewhere.

    apex and TransformerEngine have no ROCm path in NVIDIA's repositories, but AMD maintains
    forks of both (kb/packages.toml names them): a reader should hear that before any effort.
    """
    if not model.name:
        return ""
    package = kb.find_package(model.name)
    if package is None or package.status not in (
        kb.PackageStatus.NEEDS_ROCM_BUILD,
        kb.PackageStatus.PARTIAL,
    ):
        return ""
    return package.instead.rstrip(".")


def _where(evidence: Evidence) -> str:
    return f"{evidence.path}:{evidence.line}" if evidence.line else evidence.path


def build_how(evidence: tuple[Evidence, ...]) -> str:
    """How to build a project from source with its own ROCm path, from where that path is.

    A setup.py that branches on ROCm builds against the torch already installed, so pip must not
    build it in an isolated environment (which installs PyPI's CUDA torch instead:
    https://pip.pypa.io/en/stable/reference/build-system/#build-isolation); a CMake HIP switch is
    named where it is; a README section is pointed at.
    """
    first = evidence[0]
    readme = next((e for e in evidence if e.path.lower().startswith("readme")), None)
    setup = next((e for e in evidence if e.path.endswith("setup.py")), None)
    cmake = next((e for e in evidence if e.path.endswith("CMakeLists.txt")), None)
    if setup is not None:
        how = (
            "Build it from source against that ROCm torch: "
            f"`pip install --no-build-isolation .` (its setup.py takes the ROCm path, "
            f"{_where(setup)}); set PYTORCH_ROCM_ARCH to your GPU's gfx target to build only for it"
        )
    elif cmake is not None:
        how = (
            f"Configure its CMake build for HIP (the switch at {_where(cmake)}) on a machine "
            "with ROCm installed, and pass your GPU's gfx target"
        )
    elif readme is not None:
        how = f"Follow the ROCm/AMD install section of its README ({_where(readme)})"
    else:
        how = f"Build it with its own ROCm path (see {_where(first)}) on a machine with ROCm"
    if readme is not None and readme is not first and setup is not None:
        how += f"; its README documents the ROCm install ({_where(readme)})"
    return how + "."


@dataclass(frozen=True, slots=True)
class FoldedComponent:
    """A component whose findings were folded into one line: not porting work, costed at zero."""

    path: str
    status: str
    findings: int  # findings set aside in it
    alternative: str  # what the project runs on ROCm instead ("" when the model does not say)
    evidence: tuple[Evidence, ...]


def folded_components(
    model: ProjectModel | None, set_aside: list[Finding]
) -> list[FoldedComponent]:
    """Components the ROCm build leaves out (or that are opt-in), with the findings set aside."""
    if model is None:
        return []
    folded: list[FoldedComponent] = []
    for component in model.components:
        if component.status is ComponentStatus.ROCM:
            continue
        count = sum(1 for f in set_aside if model.component_of(f.location.path) is component)
        folded.append(
            FoldedComponent(
                component.path,
                component.status.value,
                count,
                component.rocm_alternative,
                component.evidence,
            )
        )
    return sorted(folded, key=lambda c: (-c.findings, c.path))


@dataclass(frozen=True, slots=True)
class NextStep:
    """One thing to do, in order; ``command`` is a gpuport command line that exists today."""

    text: str
    command: str = ""


# The steps after porting, on the ROCm machine: first the machine itself, before anything runs
# there, then its speed and its numbers against the CUDA machine's.
DOCTOR_STEP = NextStep(
    "On the ROCm machine, check the driver, the GPU, its permissions and that torch is a ROCm "
    "build for that GPU; each problem comes with the command that fixes it",
    "gpuport doctor",
)
ROCM_MACHINE_STEPS = (
    NextStep(
        "Measure speed on both machines with the same model and compare the runs (gpuport bench "
        "export on one machine, gpuport bench import and compare on the other)",
        "gpuport bench",
    ),
    NextStep(
        "Before switching over, record outputs on the CUDA machine (gpuport verify record "
        "-o ref.gpv), copy ref.gpv to the ROCm machine and compare there",
        "gpuport verify compare ref.gpv",
    ),
)


def _plan_step(has_plan: bool) -> NextStep:
    if has_plan:
        return NextStep("Pick the GPU from the plan in this report (fit, speed and cost)")
    return NextStep("See which AMD GPUs your model fits and what it costs", "gpuport plan MODEL")


def next_steps(
    *,
    root: str,
    verdict: str,
    support: RocmSupport | None,
    mechanical: int,
    manual: list[Finding],
    has_plan: bool,
    elsewhere: str = "",
) -> list[NextStep]:
    """The numbered steps after the verdict (``verdict`` is its value, e.g. "blocked")."""
    target = _shell_word(root)
    if verdict == "nothing to assess":
        return [
            NextStep(
                "Point gpuport at the folder that holds the project's code: it reads Python, "
                "CUDA and C++ sources, notebooks, requirements and pyproject files, "
                "Dockerfiles, CMake and build scripts",
                "gpuport assess PATH/TO/PROJECT",
            ),
        ]
    steps: list[NextStep] = []
    if elsewhere:
        lead = (
            "Use its ROCm build rather than porting this checkout"
            if verdict == "blocked"
            else "Before porting this checkout, consider its ROCm build"
        )
        steps.append(NextStep(f"{lead}: {elsewhere}"))
    if support is not None:
        # every ROCm path here builds or installs against a ROCm torch: that comes first
        steps.append(
            NextStep(
                "Install a ROCm build of PyTorch (the index the knowledge base names)",
                f"pip install torch --index-url {kb.pytorch_rocm_index(kb.DEFAULT_ROCM_VERSION)}",
            )
        )
        steps.append(NextStep(support.how))
        if support.coverage.missing:
            steps.append(
                NextStep(
                    "If your GPU is one its build leaves out, add its target to the build's "
                    f"architecture list: {_products(support.coverage.missing)}"
                )
            )
        elif not support.coverage.named:
            steps.append(NextStep("Build for your GPU: " + support.coverage.summary))
    # A project with its own ROCm path is used as it is: porting its CUDA code would fight its
    # build (hipify at build time); what gpuport still finds is a gap, worth fixing only if
    # the reader needs that part.
    gap = "Only if you need a part its ROCm path leaves out: " if support is not None else ""
    if mechanical and support is None:
        steps.append(
            NextStep(
                f"Apply the {mechanical} fix{'es' if mechanical != 1 else ''} gpuport makes "
                "into a copy and review the diff",
                f"gpuport port {target} --out {target}-rocm",
            )
        )
    fixes: list[str] = []
    for finding in manual:
        fix = finding.fix.text if finding.fix is not None and finding.fix.text else "fix by hand"
        # one step per piece of advice: a second rule that says the same thing adds nothing
        if any(fix in said or said in fix for said in fixes) and fix != "fix by hand":
            continue
        fixes.append(fix)
        steps.append(NextStep(f"{gap}{finding.rule_id} at {finding.location}: {fix}"))
        if len(fixes) == MAX_MANUAL_STEPS:
            break
    steps.append(_plan_step(has_plan))
    steps.append(DOCTOR_STEP)
    steps.extend(ROCM_MACHINE_STEPS)
    return [_even(step) for step in steps]


def _even(step: NextStep) -> NextStep:
    """Every step reads the same way: one with a command leads into it (the renderers add
    the colon), one without ends as a sentence; a step ending in a URL gets no full stop, so
    that the URL copies whole."""
    text = step.text.rstrip()
    if step.command:
        text = text.rstrip(":.")
    elif text and text[-1] not in ".!?" and "://" not in text.split()[-1]:
        text += "."
    return NextStep(text, step.command)


def _shell_word(text: str) -> str:
    """``text`` as one shell word (quoted when it needs to be), for a command to copy."""
    return shlex.quote(text) if text else "."
