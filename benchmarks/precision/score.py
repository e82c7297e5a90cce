"""Re-scores gpuport's findings on the real-code corpus against hand labels (issue 9).

Scans each project named in corpus.toml (or reads saved `gpuport scan --format json` outputs),
matches every current finding to labels.csv by (project, rule, path, stripped line text) with the
line number as a tie-break, and reports precision per rule, per project and overall, the labelled
TRUE findings that disappeared (recall loss), the FALSE/NOISE ones that disappeared (fixed), how
many current findings nobody has labelled yet, the `assess` verdicts against verdicts.toml, and
per-project scan time and lines. It never downloads anything.

    .venv/bin/python benchmarks/precision/score.py --corpus /work/corpus [--gpuport CMD]
        [--scans DIR]            # read DIR/base_<name>.json instead of scanning
        [--no-assess] [--report FILE.md]
        [--sample N --out FILE]  # a stratified sample of unlabelled findings, label column empty

The recall checklist (benchmarks/precision/checklist.toml, another task's) is run by its own
checker, benchmarks/precision/checklist.py; when both files exist this script runs it and
appends its output to the report.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import random
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
LABELS = HERE / "labels.csv"
CORPUS_TOML = HERE / "corpus.toml"
VERDICTS_TOML = HERE / "verdicts.toml"
CHECKLIST_TOML = HERE / "checklist.toml"
CHECKLIST_PY = HERE / "checklist.py"

LABEL_COLUMNS = ("project", "commit", "rule_id", "path", "line", "text", "label", "reason")
LABEL_VALUES = frozenset({"TRUE", "FALSE", "NOISE"})
# The tier whose findings drive assess's verdict and effort (gpuport.findings.Tier.PRODUCT);
# findings of the other tiers (tests, ci, ...) are listed too but reported separately.
PRODUCT_TIER = "product"
# GP601 folds an NVIDIA-only component into one line with no source excerpt: its "text" is the
# component's path, taken from the message ("hopper/ is NVIDIA-only: ...").
COMPONENT_RULE = "GP601"
COMPONENT_MARK = " is NVIDIA-only"
# GP602 folds a pyproject's CUDA/XPU extras into one line, also with no excerpt: its text is
# the pyproject's path ("pyproject.toml has 151 extras that install CUDA or XPU builds ...").
EXTRAS_RULE = "GP602"
EXTRAS_MARK = " has "
NVIDIA_ONLY_STATUS = "NVIDIA-only"
# Rules whose findings the scan folds, per component, into one line of the same rule that names
# the one decision (gpuport.project.file_folds: GP309's Hopper-or-newer features). The line has no
# excerpt; its text is the folder it folds, which its message names first ("the project" when
# it folds the whole project), and a gone label of that rule inside the folder is set aside.
RULE_FOLD_MARKS = {"GP309": " uses Hopper-or-newer NVIDIA features"}
# Rules that fold several sites of one file into one line of theirs, naming the sites' lines in
# its message ("... across the branches of this if/else (lines 139, 142, 145) ..."): a gone
# label of that rule, file and line is set aside under it (scan/kernels/ptx_rules.py, GP301).
LINE_FOLD_MARKS = {"GP301": re.compile(r"across the branches of this if/else \(lines ([\d, ]+)\)")}
WHOLE_PROJECT = "the project"
# Severities that cost nothing in assess's effort (gpuport.findings.Severity.INFO's label).
INFO_SEVERITIES = frozenset({"info"})
VERDICT_VALUES = frozenset(
    {"already supports ROCm", "ready", "ready with work", "blocked", "nothing to assess"}
)
# The first labelling round drew this many findings with this seed (see stratified_sample).
SAMPLE_SEED = 9
SAMPLE_SCALE = 0.55
# Files whose lines count toward "lines scanned" (the languages and build files gpuport reads);
# a fixed rule so that lines per second compare across runs of the same corpus.
SOURCE_SUFFIXES = frozenset(
    {".py", ".pyi", ".ipynb", ".cu", ".cuh", ".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp"}
    | {".inl", ".cmake", ".toml", ".cfg", ".txt", ".yml", ".yaml", ".sh", ".in"}
)
SOURCE_NAMES = frozenset({"Dockerfile", "Makefile", "CMakeLists.txt", "setup.py"})


def strip_text(text: str) -> str:
    """The line's text with its indentation and runs of blanks collapsed: survives reformatting."""
    return " ".join(text.split())


@dataclass(frozen=True)
class Current:
    """One finding of a current scan, reduced to what a label is matched on."""

    project: str
    rule_id: str
    path: str
    line: int
    text: str
    message: str = ""
    tier: str = PRODUCT_TIER
    severity: str = ""

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.project, self.rule_id, self.path, self.text)


@dataclass(frozen=True)
class Label:
    """One row of labels.csv."""

    project: str
    commit: str
    rule_id: str
    path: str
    line: int
    text: str
    label: str
    reason: str

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.project, self.rule_id, self.path, strip_text(self.text))


def findings_from_json(project: str, report: dict[str, object]) -> list[Current]:
    """The findings of one `gpuport scan --format json` output (text from each excerpt)."""
    found: list[Current] = []
    raw = report.get("findings", [])
    assert isinstance(raw, list)
    for item in raw:
        loc = item["location"]
        line = int(loc["line"])
        text = ""
        excerpt = item.get("excerpt") or {}
        lines = excerpt.get("lines") or []
        index = line - int(excerpt.get("start_line", line))
        if 0 <= index < len(lines):
            text = lines[index]
        message = str(item.get("message", ""))
        if item["rule_id"] == COMPONENT_RULE and not text.strip():
            text = component_text(message)
        elif item["rule_id"] == EXTRAS_RULE and not text.strip():
            text = message.partition(EXTRAS_MARK)[0].strip()
        elif item["rule_id"] in RULE_FOLD_MARKS and not text.strip():
            head, mark, _rest = message.partition(RULE_FOLD_MARKS[item["rule_id"]])
            text = head.strip().rstrip("/") if mark else ""
        found.append(
            Current(
                project=project,
                rule_id=str(item["rule_id"]),
                path=str(loc["path"]),
                line=line,
                text=strip_text(text),
                message=message,
                tier=str(item.get("tier") or PRODUCT_TIER),
                severity=str(item.get("severity") or ""),
            )
        )
    return found


def component_text(message: str) -> str:
    """A GP601 line's matching text: the component it folds, as its message names it first."""
    head, mark, _rest = message.partition(COMPONENT_MARK)
    # the message writes a folder (and, today, a file too) with a trailing slash
    return head.strip().rstrip("/") if mark else ""


def nvidia_only_components(report: dict[str, object]) -> list[str]:
    """Paths of the components the scan's project model calls NVIDIA-only (it folds their
    findings into one GP601 line each and keeps them as set aside)."""
    model = report.get("project")
    if not isinstance(model, dict):
        return []
    paths: list[str] = []
    for component in model.get("components") or []:
        if isinstance(component, dict) and component.get("status") == NVIDIA_ONLY_STATUS:
            paths.append(str(component["path"]).rstrip("/"))
            # files joined to it from elsewhere (an op's extra's requirements file)
            paths.extend(str(f) for f in component.get("files") or [])
    return paths


def inside(path: str, component: str) -> bool:
    """Whether `path` is the component (a file) or lies under it (a folder)."""
    return path == component or path.startswith(component + "/")


def rule_folds(findings: Iterable[Current]) -> list[tuple[str, str]]:
    """(rule, folder) of each fold line among a scan's findings (see RULE_FOLD_MARKS); the
    folder is "" when the line folds the whole project."""
    folds: list[tuple[str, str]] = []
    for f in findings:
        mark = RULE_FOLD_MARKS.get(f.rule_id)
        if mark and mark in f.message and f.text:
            folds.append((f.rule_id, "" if f.text == WHOLE_PROJECT else f.text))
    return folds


def split_set_aside(
    gone: Iterable[Label],
    components: dict[str, list[str]],
    folds: dict[str, list[tuple[str, str]]] | None = None,
    aside: dict[str, set[tuple[str, str, int]]] | None = None,
    aside_found: dict[str, list[Current]] | None = None,
) -> tuple[list[Label], list[Label]]:
    """(labels whose finding the scan folded into another line, labels really gone): a label
    inside an NVIDIA-only component of its project, of a rule whose findings a fold line of
    that rule covers (its folder), or whose (rule, path, line) the scan lists as set aside (an
    import folded under its dependency line; or a set-aside place with the label's text, at
    most ``MAX_PAIR_DISTANCE`` lines away), is set aside, not lost or fixed."""
    gone = list(gone)
    # a set-aside place whose line moved is paired by text, as labels pair with findings
    by_text = {
        id(lab)
        for lab, _f in match(gone, [f for fs in (aside_found or {}).values() for f in fs]).pairs
    }
    folded: list[Label] = []
    rest: list[Label] = []
    for label in gone:
        paths = components.get(label.project, [])
        listed = (label.rule_id, label.path, label.line) in (aside or {}).get(
            label.project, set()
        ) or id(label) in by_text
        covered = (
            listed
            or any(inside(label.path, c) for c in paths)
            or any(
                rule == label.rule_id and (not folder or inside(label.path, folder))
                for rule, folder in (folds or {}).get(label.project, [])
            )
        )
        (folded if covered else rest).append(label)
    return folded, rest


def set_aside_places(report: dict[str, object]) -> set[tuple[str, str, int]]:
    """(rule, path, line) of each finding the scan set aside (its JSON's "set_aside" list)."""
    places: set[tuple[str, str, int]] = set()
    raw = report.get("set_aside")
    for item in raw if isinstance(raw, list) else []:
        if isinstance(item, dict):
            places.add((str(item["rule_id"]), str(item["path"]), int(item["line"])))
    found = report.get("findings")
    for item in found if isinstance(found, list) else []:
        mark = LINE_FOLD_MARKS.get(str(item.get("rule_id"))) if isinstance(item, dict) else None
        fold = mark.search(str(item.get("message", ""))) if mark is not None else None
        if fold is not None:
            path = str(item["location"]["path"])
            for line in fold.group(1).split(","):
                places.add((str(item["rule_id"]), path, int(line)))
    return places


def set_aside_found(project: str, report: dict[str, object]) -> list[Current]:
    """The scan's set-aside places as findings with their line's text (when the JSON has it),
    to pair gone labels with by text."""
    found: list[Current] = []
    raw = report.get("set_aside")
    for item in raw if isinstance(raw, list) else []:
        if isinstance(item, dict) and item.get("text") is not None:
            found.append(
                Current(
                    project=project,
                    rule_id=str(item["rule_id"]),
                    path=str(item["path"]),
                    line=int(item["line"]),
                    text=strip_text(str(item["text"])),
                )
            )
    return found


def read_labels(path: Path = LABELS) -> list[Label]:
    with path.open(newline="", encoding="utf-8") as handle:
        return [
            Label(
                project=row["project"],
                commit=row["commit"],
                rule_id=row["rule_id"],
                path=row["path"],
                line=int(row["line"]),
                text=row["text"],
                label=row["label"],
                reason=row["reason"],
            )
            for row in csv.DictReader(handle)
        ]


def write_rows(path: Path, rows: Iterable[dict[str, object]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=LABEL_COLUMNS, lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow(row)


@dataclass
class Matching:
    """Labels paired with current findings, and what is left on either side."""

    pairs: list[tuple[Label, Current]] = field(default_factory=list)
    gone: list[Label] = field(default_factory=list)
    unlabelled: list[Current] = field(default_factory=list)


# How far apart a label and a finding with the same key may lie and still pair. The corpus is
# pinned (corpus.toml), so a label's line only drifts when a rule moves its anchor inside one
# construct (an #if block's guard instead of its body: 30-33 lines seen). Beyond that the same
# text is another site: TE's ptx.cuh repeats one PTX line 500 lines apart, and a label for the
# first must not pass its verdict to the second once the first is no longer reported.
MAX_PAIR_DISTANCE = 60


def match(labels: Sequence[Label], findings: Sequence[Current]) -> Matching:
    """Pairs labels with findings of the same key; among equals, the nearest lines pair first,
    never more than ``MAX_PAIR_DISTANCE`` lines apart."""
    by_key: dict[tuple[str, str, str, str], list[Current]] = defaultdict(list)
    for found in findings:
        by_key[found.key].append(found)
    labels_by_key: dict[tuple[str, str, str, str], list[Label]] = defaultdict(list)
    for label in labels:
        labels_by_key[label.key].append(label)
    result = Matching()
    paired: set[int] = set()
    for key, group in labels_by_key.items():
        candidates = by_key.get(key, [])
        options = sorted(
            (abs(lab.line - cur.line), li, ci)
            for li, lab in enumerate(group)
            for ci, cur in enumerate(candidates)
        )
        used_labels: set[int] = set()
        used_findings: set[int] = set()
        for distance, li, ci in options:
            if distance > MAX_PAIR_DISTANCE:
                break
            if li in used_labels or ci in used_findings:
                continue
            used_labels.add(li)
            used_findings.add(ci)
            result.pairs.append((group[li], candidates[ci]))
            paired.add(id(candidates[ci]))
        result.gone.extend(lab for li, lab in enumerate(group) if li not in used_labels)
    result.unlabelled = [found for found in findings if id(found) not in paired]
    return result


@dataclass
class Tally:
    """Label counts among the labelled findings still present."""

    true: int = 0
    false: int = 0
    noise: int = 0

    def add(self, label: str) -> None:
        if label == "TRUE":
            self.true += 1
        elif label == "FALSE":
            self.false += 1
        else:
            self.noise += 1

    @property
    def total(self) -> int:
        return self.true + self.false + self.noise

    @property
    def precision(self) -> float | None:
        return self.true / self.total if self.total else None


def tallies(
    pairs: Iterable[tuple[Label, Current]],
) -> tuple[Tally, dict[str, Tally], dict[str, Tally]]:
    """Overall, per-rule and per-project tallies of the matched labels."""
    overall = Tally()
    per_rule: dict[str, Tally] = defaultdict(Tally)
    per_project: dict[str, Tally] = defaultdict(Tally)
    for label, _found in pairs:
        overall.add(label.label)
        per_rule[label.rule_id].add(label.label)
        per_project[label.project].add(label.label)
    return overall, dict(per_rule), dict(per_project)


def tier_tallies(pairs: Iterable[tuple[Label, Current]]) -> dict[str, Tally]:
    """Tallies of the matched labels by the current finding's tier."""
    per_tier: dict[str, Tally] = defaultdict(Tally)
    for label, found in pairs:
        per_tier[found.tier].add(label.label)
    return dict(per_tier)


def product_pairs(pairs: Iterable[tuple[Label, Current]]) -> list[tuple[Label, Current]]:
    """The matched labels whose finding is product code (what drives verdict and effort)."""
    return [(label, found) for label, found in pairs if found.tier == PRODUCT_TIER]


def actionable(found: Current) -> bool:
    """A product finding at severity low or above: what assess counts as work (info findings
    are listed for the reader but cost nothing)."""
    return found.tier == PRODUCT_TIER and found.severity not in INFO_SEVERITIES


def weighted_precision(
    matching: Matching, findings: Sequence[Current], tier: str | None = None
) -> float | None:
    """Precision over all current findings (of `tier`, when given), each labelled stratum
    (rule x project) weighted by its size: the sample over-draws small rules, so the plain
    ratio is not the population's."""
    size = Counter((f.rule_id, f.project) for f in findings if tier is None or f.tier == tier)
    labelled: dict[tuple[str, str], Tally] = defaultdict(Tally)
    for label, found in matching.pairs:
        if tier is None or found.tier == tier:
            labelled[(found.rule_id, found.project)].add(label.label)
    weight = sum(size[s] for s in labelled)
    if not weight:
        return None
    return sum(size[s] * (t.true / t.total) for s, t in labelled.items()) / weight


def rule_quota(count: int, scale: float = SAMPLE_SCALE) -> int:
    """How many findings of a rule firing `count` times to draw: about scale·√count, at least
    two (every rule that fires gets labels) and never more than there are."""
    return min(count, max(2, round(scale * math.sqrt(count))))


def stratified_sample(
    findings: Sequence[Current], seed: int = SAMPLE_SEED, scale: float = SAMPLE_SCALE
) -> list[Current]:
    """A seeded sample stratified by rule x project: each rule gets rule_quota draws, spread over
    the projects it fires in (every project once before any twice), uniformly within each."""
    rng = random.Random(seed)
    by_rule: dict[str, dict[str, list[Current]]] = defaultdict(lambda: defaultdict(list))
    for found in sorted(findings, key=lambda f: (f.rule_id, f.project, f.path, f.line, f.text)):
        by_rule[found.rule_id][found.project].append(found)
    chosen: list[Current] = []
    for rule in sorted(by_rule):
        strata = {name: list(items) for name, items in sorted(by_rule[rule].items())}
        for items in strata.values():
            rng.shuffle(items)
        order = sorted(strata)
        rng.shuffle(order)
        quota = rule_quota(sum(len(v) for v in strata.values()), scale)
        while quota > 0:
            took = False
            for name in order:
                if quota > 0 and strata[name]:
                    chosen.append(strata[name].pop())
                    quota -= 1
                    took = True
            if not took:
                break
    return chosen


def load_corpus(path: Path = CORPUS_TOML) -> list[dict[str, str]]:
    with path.open("rb") as handle:
        data = tomllib.load(handle)
    projects = data["project"]
    assert isinstance(projects, list)
    return projects


def load_verdicts(path: Path = VERDICTS_TOML) -> dict[str, dict[str, object]]:
    with path.open("rb") as handle:
        data = tomllib.load(handle)
    return {str(entry["project"]): entry for entry in data["verdict"]}


def count_lines(root: Path) -> int:
    """Lines in the project's source and build files (SOURCE_SUFFIXES), .git left out."""
    total = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in filenames:
            if Path(name).suffix in SOURCE_SUFFIXES or name in SOURCE_NAMES:
                try:
                    with open(os.path.join(dirpath, name), "rb") as handle:
                        total += sum(
                            chunk.count(b"\n") for chunk in iter(lambda: handle.read(1 << 16), b"")
                        )
                except OSError:
                    continue
    return total


def gpuport_command(explicit: str | None) -> list[str]:
    """How to run gpuport: --gpuport, else the script beside this Python (a venv's, which with
    PYTHONPATH=src runs that checkout's code), else one on PATH, else the CLI entry point."""
    if explicit:
        return shlex.split(explicit)
    beside = Path(sys.executable).parent / "gpuport"
    if beside.is_file():
        return [str(beside)]
    found = shutil.which("gpuport")
    if found:
        return [found]
    return [sys.executable, "-c", "from gpuport.cli import main; main()"]


@dataclass
class ScanRun:
    """One project's scan: its findings, the engine's own seconds and the size scanned."""

    project: str
    findings: list[Current]
    seconds: float | None  # the scan's own timing.seconds (engine time, no process start)
    wall_seconds: float | None  # the whole `gpuport scan` process; None for a saved JSON
    lines: int
    bytes_scanned: int
    set_aside: int = 0  # findings the scan folded into GP601 lines (kept, not listed)
    nvidia_only: list[str] = field(default_factory=list)  # the folded components' paths
    # (rule, path, line) of every finding the scan set aside
    aside: set[tuple[str, str, int]] = field(default_factory=set)
    aside_found: list[Current] = field(default_factory=list)  # those places, with their text


def saved_scan(folder: Path, name: str) -> Path | None:
    """A saved scan JSON for `name` in folder: base_<name>.json (the baseline's) or <name>.json."""
    for candidate in (folder / f"base_{name}.json", folder / f"{name}.json"):
        if candidate.is_file():
            return candidate
    return None


def _engine_seconds(stdout: str, fallback: float) -> float:
    try:
        return float(json.loads(stdout)["timing"]["seconds"])
    except (ValueError, KeyError, TypeError):
        return fallback


def scan_project(
    command: list[str],
    name: str,
    root: Path,
    saved: Path | None,
    save_to: Path | None = None,
    repeat: int = 1,
) -> ScanRun:
    """One project's findings: from a saved JSON when given, else by running the scan (`repeat`
    times, keeping the fastest: on a shared machine the minimum is the least disturbed)."""
    wall: float | None = None
    if saved is not None:
        raw = saved.read_text(encoding="utf-8")
    else:
        argv = [*command, "scan", str(root), "--format", "json", "--no-progress"]
        fastest: tuple[float, float, subprocess.CompletedProcess[str]] | None = None
        for _ in range(max(1, repeat)):
            started = time.perf_counter()
            done = subprocess.run([*argv, "--fail-on", "never"], capture_output=True, text=True)
            elapsed = time.perf_counter() - started
            engine = _engine_seconds(done.stdout, elapsed)
            if fastest is None or engine < fastest[0]:
                fastest = (engine, elapsed, done)
        assert fastest is not None
        _engine, wall, done = fastest
        # exit 2 also means "some files could not be read": the JSON is still whole then
        if done.returncode not in (0, 1, 2) or not done.stdout.lstrip().startswith("{"):
            raise SystemExit(f"gpuport scan {root} exited {done.returncode}: {done.stderr[-2000:]}")
        raw = done.stdout
        if save_to is not None:
            save_to.mkdir(parents=True, exist_ok=True)
            (save_to / f"{name}.json").write_text(raw, encoding="utf-8")
    report = json.loads(raw)
    timing = report.get("timing") or {}
    seconds = timing.get("seconds")
    stats = report.get("stats") or {}
    return ScanRun(
        project=name,
        findings=findings_from_json(name, report),
        seconds=float(seconds) if seconds is not None else wall,
        wall_seconds=wall,
        lines=count_lines(root) if root.is_dir() else 0,
        bytes_scanned=int(stats.get("bytes_scanned", 0)),
        set_aside=int((report.get("summary") or {}).get("set_aside", 0)),
        nvidia_only=nvidia_only_components(report),
        aside=set_aside_places(report),
        aside_found=set_aside_found(name, report),
    )


def find_verdict(report: object) -> str | None:
    """The verdict string anywhere in assess's JSON (its place may move; its key is 'verdict')."""
    if isinstance(report, dict):
        for key, value in report.items():
            if key == "verdict":
                if isinstance(value, str):
                    return value
                inner = find_verdict(value)
                if inner:
                    return inner
                if isinstance(value, dict):
                    for sub in ("label", "name", "value", "status"):
                        if isinstance(value.get(sub), str):
                            return str(value[sub])
        for value in report.values():
            inner = find_verdict(value)
            if inner:
                return inner
    elif isinstance(report, list):
        for value in report:
            inner = find_verdict(value)
            if inner:
                return inner
    return None


def normalise_verdict(text: str) -> str:
    lowered = " ".join(text.replace("_", " ").replace("-", " ").lower().split())
    for value in sorted(VERDICT_VALUES, key=len, reverse=True):
        if value.lower() in lowered:
            return value
    return lowered


def assess_project(command: list[str], root: Path) -> str:
    done = subprocess.run(
        [
            *command,
            "assess",
            str(root),
            "--format",
            "json",
            "--no-html",
            "--no-progress",
            "--fail-on",
            "never",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode not in (0, 1, 2) or not done.stdout.lstrip().startswith("{"):
        return f"error {done.returncode}: {done.stderr.strip()[-200:]}"
    try:
        verdict = find_verdict(json.loads(done.stdout))
    except json.JSONDecodeError:
        return "unreadable JSON"
    return normalise_verdict(verdict) if verdict else "no verdict in JSON"


def fmt(value: float | None, digits: int = 0) -> str:
    return "-" if value is None else f"{100 * value:.{digits}f}%"


def _tally_row(name: str, now: int, t: Tally) -> str:
    return f"| {name} | {now} | {t.total} | {t.true} | {t.false} | {t.noise} | {fmt(t.precision)} |"


def report_markdown(
    runs: Sequence[ScanRun],
    labels: Sequence[Label],
    verdicts: dict[str, str],
    expected: dict[str, dict[str, object]],
    checklist_output: str | None,
) -> str:
    findings = [f for run in runs for f in run.findings]
    scanned = {run.project for run in runs}
    matching = match([lab for lab in labels if lab.project in scanned], findings)
    overall, per_rule, per_project = tallies(matching.pairs)
    product, product_rule, product_project = tallies(product_pairs(matching.pairs))
    per_tier = tier_tallies(matching.pairs)
    product_now = [f for f in findings if f.tier == PRODUCT_TIER]
    out: list[str] = []
    out.append("## Precision on the labelled sample\n")
    out.append(
        f"Labelled findings present: {overall.total} (TRUE {overall.true}, FALSE {overall.false},"
        f" NOISE {overall.noise}); precision **{fmt(overall.precision, 1)}** on the sample,"
        f" {fmt(weighted_precision(matching, findings), 1)} weighted by stratum size"
        f" (rule x project) over all {len(findings)} current findings.\n"
    )
    out.append(
        f"Product tier (the findings that drive the verdict and the effort): labelled present"
        f" {product.total} (TRUE {product.true}, FALSE {product.false}, NOISE {product.noise});"
        f" precision **{fmt(product.precision, 1)}** on the sample,"
        f" {fmt(weighted_precision(matching, findings, PRODUCT_TIER), 1)} weighted by stratum"
        f" size over all {len(product_now)} current product findings.\n"
    )
    work = tallies([(lab, f) for lab, f in matching.pairs if actionable(f)])[0]
    work_now = sum(1 for f in findings if actionable(f))
    out.append(
        f"Product tier at severity low or above (what assess counts as work): labelled present"
        f" {work.total} (TRUE {work.true}, FALSE {work.false}, NOISE {work.noise}); precision"
        f" **{fmt(work.precision, 1)}** on the sample, of {work_now} current findings.\n"
    )
    out.append(f"Current findings without a label: {len(matching.unlabelled)}.\n")
    out.append("| tier | findings now | labelled present | TRUE | FALSE | NOISE | precision |")
    out.append("|---|---:|---:|---:|---:|---:|---:|")
    now_by_tier = Counter(f.tier for f in findings)
    for tier in sorted(set(now_by_tier) | set(per_tier), key=lambda t: (t != PRODUCT_TIER, t)):
        out.append(_tally_row(tier, now_by_tier.get(tier, 0), per_tier.get(tier, Tally())))
    out.append(
        "\n| rule | findings now | labelled present | TRUE | FALSE | NOISE | precision |"
        " product labelled | product precision |"
    )
    out.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    now_by_rule = Counter(f.rule_id for f in findings)
    for rule in sorted(set(now_by_rule) | set(per_rule)):
        t = per_rule.get(rule, Tally())
        pt = product_rule.get(rule, Tally())
        out.append(
            _tally_row(rule, now_by_rule.get(rule, 0), t) + f" {pt.total} | {fmt(pt.precision)} |"
        )
    components = {run.project: run.nvidia_only for run in runs}
    folds = {run.project: rule_folds(run.findings) for run in runs}
    folded, gone = split_set_aside(
        matching.gone,
        components,
        folds,
        {run.project: run.aside for run in runs},
        {run.project: run.aside_found for run in runs},
    )
    folded_by_project: dict[str, Tally] = defaultdict(Tally)
    for lab in folded:
        folded_by_project[lab.project].add(lab.label)
    out.append(
        "\n| project | findings now | labelled present | TRUE | FALSE | NOISE | precision |"
        " product now | product labelled | product precision | set aside | labels set aside |"
    )
    out.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    now_by_project = Counter(f.project for f in findings)
    product_by_project = Counter(f.project for f in product_now)
    for run in sorted(runs, key=lambda r: r.project):
        name = run.project
        t = per_project.get(name, Tally())
        pt = product_project.get(name, Tally())
        out.append(
            _tally_row(name, now_by_project.get(name, 0), t)
            + f" {product_by_project.get(name, 0)} | {pt.total} | {fmt(pt.precision)} |"
            f" {run.set_aside} | {folded_by_project.get(name, Tally()).total} |"
        )
    lost = [lab for lab in gone if lab.label == "TRUE"]
    fixed = [lab for lab in gone if lab.label != "TRUE"]
    out.append(f"\n## Labelled TRUE findings gone (recall loss): {len(lost)}\n")
    out.extend(
        f"- {lab.project} {lab.rule_id} {lab.path}:{lab.line} — {lab.reason}" for lab in lost
    )
    out.append(f"\n## FALSE/NOISE findings gone (fixed): {len(fixed)}\n")
    by_rule_fixed = Counter(lab.rule_id for lab in fixed)
    out.append(", ".join(f"{r}: {n}" for r, n in sorted(by_rule_fixed.items())) or "none")
    folded_total = Tally()
    for lab in folded:
        folded_total.add(lab.label)
    out.append(
        f"\n## Labelled findings set aside (folded into a GP601 or rule fold line):"
        f" {folded_total.total}"
        f" (TRUE {folded_total.true}, FALSE {folded_total.false}, NOISE {folded_total.noise})\n"
    )
    out.append(
        "Not counted in precision: the scan keeps them but lists one GP601 line per component"
        " (and one GP309 line per component for its Hopper-or-newer features). A TRUE one set"
        " aside is work the fold hides: judge whether the component really is NVIDIA-only, or"
        " whether the fold line names its decision.\n"
    )
    out.extend(
        f"- TRUE set aside: {lab.project} {lab.rule_id} {lab.path}:{lab.line} — {lab.reason}"
        for lab in folded
        if lab.label == "TRUE"
    )
    if verdicts:
        out.append("\n## assess verdicts against verdicts.toml\n")
        out.append("| project | expected | assess says | right |")
        out.append("|---|---|---|---|")
        right = 0
        for name in sorted(verdicts):
            want = str(expected.get(name, {}).get("verdict", "?"))
            ok = verdicts[name] == want
            right += ok
            out.append(f"| {name} | {want} | {verdicts[name]} | {'yes' if ok else 'no'} |")
        out.append(f"\nRight on {right} of {len(verdicts)}.")
    out.append("\n## Scan time and lines\n")
    out.append(
        "seconds: the scan's own timing (engine, no process start); wall: the whole command."
        " lines: newlines in source and build files (score.py SOURCE_SUFFIXES).\n"
    )
    out.append("| project | lines | bytes scanned | findings | seconds | wall s | lines/s |")
    out.append("|---|---:|---:|---:|---:|---:|---:|")
    total_lines = 0
    total_seconds = 0.0
    for run in runs:
        rate = f"{run.lines / run.seconds:,.0f}" if run.seconds else "-"
        secs = f"{run.seconds:.2f}" if run.seconds is not None else "-"
        wall = f"{run.wall_seconds:.2f}" if run.wall_seconds is not None else "-"
        out.append(
            f"| {run.project} | {run.lines:,} | {run.bytes_scanned:,} | {len(run.findings)} |"
            f" {secs} | {wall} | {rate} |"
        )
        total_lines += run.lines
        total_seconds += run.seconds or 0.0
    if total_seconds:
        out.append(
            f"| all | {total_lines:,} | | {len(findings)} | {total_seconds:.2f} | |"
            f" {total_lines / total_seconds:,.0f} |"
        )
    if checklist_output is not None:
        out.append("\n## Recall checklist (benchmarks/precision/checklist.py)\n")
        out.append("```\n" + checklist_output.strip() + "\n```")
    return "\n".join(out) + "\n"


def run_checklist() -> str | None:
    """The checklist task's checker, when its files exist. It scores this checkout's src; its
    Markdown goes to a temporary file so that results/checklist.md (its owner's) stays as is."""
    if not (CHECKLIST_TOML.exists() and CHECKLIST_PY.exists()):
        return None
    with tempfile.TemporaryDirectory() as folder:
        argv = [sys.executable, str(CHECKLIST_PY), "--output", str(Path(folder) / "checklist.md")]
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
    return done.stdout + (
        f"\n(exit {done.returncode}) {done.stderr[-1000:]}" if done.returncode else ""
    )


def proportional_sample(
    findings: Sequence[Current], count: int, seed: int = SAMPLE_SEED
) -> list[Current]:
    """A seeded uniform sample: each rule x project stratum gets draws in proportion to its
    size, so the big strata that dominate the weighted precision get labels too."""
    ordered = sorted(findings, key=lambda f: (f.rule_id, f.project, f.path, f.line, f.text))
    drawn = random.Random(seed).sample(ordered, min(count, len(ordered)))
    return sorted(drawn, key=lambda f: (f.rule_id, f.project, f.path, f.line))


def sample_rows(
    findings: Sequence[Current],
    labels: Sequence[Label],
    count: int,
    commits: dict[str, str],
    proportional: bool = False,
) -> list[dict[str, object]]:
    """A sample of `count` unlabelled findings as label rows with the label empty: stratified
    (every rule gets some) by default, proportional to stratum size when asked."""
    unlabelled = match(labels, findings).unlabelled
    if proportional:
        return [_row(f, commits) for f in proportional_sample(unlabelled, count)]
    scale = SAMPLE_SCALE
    drawn = stratified_sample(unlabelled, SAMPLE_SEED, scale)
    # Grow or shrink the per-rule scale until the draw is about the size asked for.
    for _ in range(40):
        if len(drawn) >= count or len(drawn) == len(unlabelled):
            break
        scale *= 1.25
        drawn = stratified_sample(unlabelled, SAMPLE_SEED, scale)
    if len(drawn) > count:
        # a seeded uniform subset of a stratified draw keeps every rule's share about the same
        drawn = random.Random(SAMPLE_SEED).sample(drawn, count)
        drawn.sort(key=lambda f: (f.rule_id, f.project, f.path, f.line))
    return [_row(f, commits) for f in drawn]


def _row(found: Current, commits: dict[str, str]) -> dict[str, object]:
    return {
        "project": found.project,
        "commit": commits.get(found.project, ""),
        "rule_id": found.rule_id,
        "path": found.path,
        "line": found.line,
        "text": found.text,
        "label": "",
        "reason": "",
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--corpus", type=Path, required=True, help="folder holding one checkout per project"
    )
    parser.add_argument("--gpuport", help="command that runs gpuport (default: the installed one)")
    parser.add_argument(
        "--scans", type=Path, help="read DIR/base_<name>.json or DIR/<name>.json, not scanning"
    )
    parser.add_argument("--repeat", type=int, default=1, help="scan N times, keep the fastest")
    parser.add_argument("--save-scans", type=Path, help="write each scan's JSON to DIR/<name>.json")
    parser.add_argument("--labels", type=Path, default=LABELS)
    parser.add_argument("--project", action="append", help="only this project (repeatable)")
    parser.add_argument("--no-assess", action="store_true", help="skip the verdict check")
    parser.add_argument(
        "--no-checklist", action="store_true", help="skip the recall checklist (checklist.py)"
    )
    parser.add_argument("--report", type=Path, help="also write the Markdown report here")
    parser.add_argument("--sample", type=int, help="draw N unlabelled findings for labelling")
    parser.add_argument("--out", type=Path, help="where --sample writes its CSV")
    parser.add_argument(
        "--proportional",
        action="store_true",
        help="draw --sample uniformly (strata in proportion to size), not stratified by rule",
    )
    parser.add_argument(
        "--sample-tier", help="draw --sample only from findings of this tier (e.g. product)"
    )
    args = parser.parse_args(argv)
    if args.sample is not None and args.out is None:
        parser.error("--sample needs --out")
    command = gpuport_command(args.gpuport)
    corpus = load_corpus()
    commits = {str(p["name"]): str(p["commit"]) for p in corpus}
    names = [str(p["name"]) for p in corpus if not args.project or p["name"] in args.project]
    labels = read_labels(args.labels) if args.labels.exists() else []
    runs: list[ScanRun] = []
    for name in names:
        root = args.corpus / name
        saved = saved_scan(args.scans, name) if args.scans else None
        if saved is None and not root.is_dir():
            print(f"skipped {name}: {root} is not a folder", file=sys.stderr)
            continue
        runs.append(scan_project(command, name, root, saved, args.save_scans, args.repeat))
        print(f"scanned {name}: {len(runs[-1].findings)} findings", file=sys.stderr)
    if args.sample is not None:
        pool = [
            f
            for r in runs
            for f in r.findings
            if args.sample_tier is None or f.tier == args.sample_tier
        ]
        rows = sample_rows(pool, labels, args.sample, commits, args.proportional)
        write_rows(args.out, rows)
        print(f"wrote {len(rows)} unlabelled findings to {args.out}", file=sys.stderr)
    verdicts: dict[str, str] = {}
    if not args.no_assess:
        for run in runs:
            verdicts[run.project] = assess_project(command, args.corpus / run.project)
    expected = load_verdicts() if VERDICTS_TOML.exists() else {}
    checklist = None if args.no_checklist else run_checklist()
    text = report_markdown(runs, labels, verdicts, expected, checklist)
    print(text)
    if args.report:
        args.report.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
