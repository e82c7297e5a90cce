"""Which tier a path belongs to (tests, benchmarks, examples…), from its folder and file names.

The heuristics are data: :data:`TIER_RULES` is the one table, each row with the reason it holds.
The project model puts the prefixes it finds in the project's own files (``.gitmodules``, build
files) ahead of this table; the table is the fallback for every other path.
"""

from __future__ import annotations

import fnmatch
import functools
import re
from dataclasses import dataclass

from gpuport.findings import Tier


@dataclass(frozen=True, slots=True)
class TierRule:
    """Paths a folder or file name puts in ``tier``.

    ``folders``: folder names; ``top_only`` limits them to the first path part (a ``scripts/``
    inside a package is often shipped code). ``files``: glob patterns on the file name.
    """

    tier: Tier
    folders: frozenset[str] = frozenset()
    files: tuple[str, ...] = ()
    top_only: bool = False


TIER_RULES: tuple[TierRule, ...] = (
    # Copied-in third-party code: the project does not port it, its upstream does
    # (flash-attention's csrc/cutlass, TransformerEngine's 3rdparty/, torchao's third_party/).
    TierRule(
        Tier.VENDORED,
        frozenset({"third_party", "third-party", "3rdparty", "vendor", "vendored", "external"}),
    ),
    # Old code kept for old users; porting it is rarely what a team wants first.
    TierRule(Tier.DEPRECATED, frozenset({"deprecated", "legacy"})),
    # pytest's and unittest's layouts: tests/ folders anywhere (DeepSpeed's tests/unit,
    # flash-attention's tests/cute), test_*.py and *_test.py modules, conftest.py fixtures;
    # and a package's test helpers, a testing/ folder or a testing.py module (numpy.testing,
    # torch.testing, pandas.testing: tolerances, reference inputs and devices for the tests).
    TierRule(
        Tier.TESTS,
        frozenset({"tests", "test", "testing", "unittests"}),
        (
            "test_*.py",
            "*_test.py",
            "conftest.py",
            "testing.py",
            "testing_utils.py",
            "*_test.cc",
            "*_test.cpp",
            "*_test.cu",
        ),
    ),
    # Quality-assurance scripts at the top (TransformerEngine's qa/ runs its test suites).
    TierRule(Tier.TESTS, frozenset({"qa"}), top_only=True),
    # Measuring code: not what users run (benchmarks/, bitsandbytes' benchmarking/).
    TierRule(
        Tier.BENCHMARKS,
        frozenset({"benchmarks", "benchmark", "bench", "benchmarking"}),
        ("benchmark_*.py", "bench_*.py"),
    ),
    # Code that shows how to use the project; users copy it, the project does not ship it.
    TierRule(
        Tier.EXAMPLES,
        frozenset(
            {
                "examples",
                "example",
                "tutorials",
                "tutorial",
                "notebooks",
                "recipes",
                "demo",
                "demos",
            }
        ),
        ("*.ipynb",),
    ),
    # Training and evaluation scripts at the top (flash-attention's training/, mamba's evals/).
    TierRule(Tier.EXAMPLES, frozenset({"training", "eval", "evals"}), top_only=True),
    # Documentation sources, and DeepSpeed's blog posts.
    TierRule(Tier.DOCS, frozenset({"docs", "doc", "blogs"})),
    # CI configuration: GitHub, GitLab, CircleCI, Buildkite, Azure, and release tooling.
    TierRule(
        Tier.CI,
        frozenset({".github", ".gitlab", ".circleci", ".buildkite", ".azure-pipelines"}),
        (".gitlab-ci.yml", "azure-pipelines.yml", "Jenkinsfile"),
    ),
    TierRule(Tier.CI, frozenset({"ci", "release", ".ci"}), top_only=True),
    # Wheel and package building for the project's own releases (torchao's packaging/,
    # TransformerEngine's build_tools/wheel_utils/): release tooling, not what users run.
    TierRule(Tier.CI, frozenset({"wheel_utils"})),
    TierRule(Tier.CI, frozenset({"packaging"}), top_only=True),
    # Developer scripts at the top of the tree; inside a package these names are often shipped.
    # Scratch folders (repro/, sandbox/, playground/) hold a developer's experiments.
    TierRule(
        Tier.DEV,
        frozenset(
            {
                "scripts",
                "tools",
                "dev",
                "devtools",
                "utils_dev",
                "repro",
                "repros",
                "reproducers",
                "scratch",
                "sandbox",
                "playground",
            }
        ),
        top_only=True,
    ),
    # A bug reproducer (race_repro_tma.py, repro_issue_123.py): a script written to show a
    # developer one failure, run by hand, never imported by the package.
    TierRule(Tier.DEV, files=("repro.py", "repro_*.py", "*_repro.py", "*_repro_*.py")),
)


def _folder_tiers(top: bool) -> dict[str, Tier]:
    """Each folder name's tier from the first rule naming it, at the top or deeper."""
    out: dict[str, Tier] = {}
    for rule in TIER_RULES:
        if top or not rule.top_only:
            for folder in rule.folders:
                out.setdefault(folder, rule.tier)
    return out


# The table as two lookups and one pattern per rule: the model asks for 1,700 paths on DeepSpeed
# (a rule-by-rule scan with fnmatch took 30 ms of its 80 ms).
_TOP_FOLDERS = _folder_tiers(top=True)
_DEEP_FOLDERS = _folder_tiers(top=False)
_FILE_RULES = tuple(
    (re.compile("|".join(fnmatch.translate(p) for p in rule.files)), rule.tier)
    for rule in TIER_RULES
    if rule.files
)


def tier_by_name(rel: str) -> Tier | None:
    """The tier :data:`TIER_RULES` gives ``rel`` (a path relative to the root), or None.

    The outermost folder that a rule names decides (``tests/benchmarks/x.py`` is a test);
    a file-name rule applies only when no folder rule does.
    """
    parts = rel.split("/")
    if len(parts) > 1:
        tier = _TOP_FOLDERS.get(parts[0].lower())
        if tier is not None:
            return tier
        for folder in parts[1:-1]:
            tier = _DEEP_FOLDERS.get(folder.lower())
            if tier is not None:
                return tier
    return _file_tier(parts[-1])


@functools.lru_cache(maxsize=4096)
def _file_tier(name: str) -> Tier | None:
    for pattern, tier in _FILE_RULES:
        if pattern.match(name):
            return tier
    return None
