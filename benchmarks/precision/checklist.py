"""Recall on known ROCm porting problems: which checklist items `gpuport scan` finds.

Each item of benchmarks/precision/checklist.toml names a fixture folder (written for this
checklist in the pattern of a real project's bug) and the lines where a finding is expected.
An item is found when any finding at severity low or above starts or ends on one of those
lines, or spans it. Writes benchmarks/precision/results/checklist.md and prints the summary.

    PYTHONPATH=src .venv/bin/python benchmarks/precision/checklist.py [--only CL01,CL02]
        [--output FILE] [--json FILE] [--src OTHER_CHECKOUT/src]

--src scores another checkout's gpuport (a branch's worktree) with this checklist.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tomllib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
CHECKLIST = HERE / "checklist.toml"
DEFAULT_OUTPUT = HERE / "results" / "checklist.md"

# Severity order of gpuport's findings; an item counts as found from LOWEST_COUNTED up.
SEVERITY_ORDER = ("info", "low", "medium", "high", "blocker")
LOWEST_COUNTED = "low"
KINDS = ("kernels", "python", "deps", "build", "containers")


@dataclass(frozen=True, slots=True)
class Item:
    id: str
    title: str
    project: str
    source: str
    date: str
    kind: str
    problem: str
    fixture: str
    expected: tuple[tuple[str, int], ...]
    rules: tuple[str, ...]
    needs: str


@dataclass(slots=True)
class Outcome:
    item: Item
    found: bool
    hits: list[str] = field(default_factory=list)  # "GP306 medium row_norm.cu:6" on expected lines
    other: list[str] = field(default_factory=list)  # rule ids that fired elsewhere in the fixture
    error: str = ""


def parse_expected(text: str) -> tuple[str, int]:
    """'path/in/fixture:LINE' -> (path, line)."""
    path, _, line = text.rpartition(":")
    if not path or not line.isdigit():
        raise ValueError(f"expected location {text!r} is not PATH:LINE")
    return path, int(line)


def load_items(path: Path = CHECKLIST) -> list[Item]:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    items = []
    for raw in data["item"]:
        items.append(
            Item(
                id=raw["id"],
                title=raw["title"],
                project=raw["project"],
                source=raw["source"],
                date=raw["date"],
                kind=raw["kind"],
                problem=raw["problem"],
                fixture=raw["fixture"],
                expected=tuple(parse_expected(e) for e in raw["expected"]),
                rules=tuple(raw["rules"]),
                needs=raw["needs"],
            )
        )
    return items


def scan_json(folder: Path, src: Path) -> dict[str, object]:
    """`gpuport scan FOLDER --format json` in a child process (the CLI as a user runs it)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(src), env.get("PYTHONPATH")]))
    command = [
        sys.executable,
        "-c",
        "from gpuport.cli import main; main()",
        "scan",
        str(folder),
        "--format",
        "json",
        "--no-progress",
        "--fail-on",
        "never",
        "--jobs",
        "1",
    ]
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"gpuport scan {folder} exited {done.returncode}: {done.stderr[-400:]}")
    result: dict[str, object] = json.loads(done.stdout)
    return result


def judge(item: Item, report: dict[str, object]) -> Outcome:
    counted = SEVERITY_ORDER.index(LOWEST_COUNTED)
    outcome = Outcome(item=item, found=False)
    findings = report.get("findings", [])
    assert isinstance(findings, list)
    for finding in findings:
        location = finding["location"]
        path = location["path"]
        first = location["line"]
        last = location.get("end_line") or first
        severity = finding["severity"]
        label = f"{finding['rule_id']} {severity} {path}:{first}"
        on_expected = any(
            path == want_path and first <= want_line <= last
            for want_path, want_line in item.expected
        )
        if on_expected and SEVERITY_ORDER.index(severity) >= counted:
            outcome.found = True
            outcome.hits.append(label)
        elif on_expected:
            outcome.other.append(label + " (below low)")
        else:
            outcome.other.append(label)
    return outcome


def git_commit(src: Path) -> str:
    """The commit of the checkout that holds SRC, noting uncommitted changes under it."""
    done = subprocess.run(
        ["git", "-C", str(src), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        check=False,
    )
    commit = done.stdout.strip() or "unknown"
    dirty = subprocess.run(
        ["git", "-C", str(src), "status", "--porcelain", "--", "."],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    return commit + (" (src modified)" if dirty else "")


def escape_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def recall_line(label: str, outcomes: list[Outcome]) -> str:
    found = sum(o.found for o in outcomes)
    total = len(outcomes)
    share = f"{100 * found / total:.0f}%" if total else "-"
    return f"| {label} | {found} | {total} | {share} |"


def render(outcomes: list[Outcome], commit: str) -> str:
    lines = [
        "# Checklist recall: known ROCm porting problems",
        "",
        "Generated by `benchmarks/precision/checklist.py` from `benchmarks/precision/checklist.toml`.",
        f"gpuport commit: {commit}. Machine: {os.cpu_count()} CPU cores, no GPU, "
        f"{platform.system()} {platform.machine()}, Python {platform.python_version()}.",
        "",
        f"An item is found when a finding at severity {LOWEST_COUNTED} or above lands on one of "
        "its expected lines.",
        "",
        "## Recall",
        "",
        "| kind | found | items | recall |",
        "|---|---|---|---|",
        recall_line("all", outcomes),
    ]
    for kind in KINDS:
        of_kind = [o for o in outcomes if o.item.kind == kind]
        if of_kind:
            lines.append(recall_line(kind, of_kind))
    lines += [
        "",
        "## Items",
        "",
        "| id | kind | problem | source | expected | result | rule on expected line |",
        "|---|---|---|---|---|---|---|",
    ]
    for o in outcomes:
        item = o.item
        expected = ", ".join(f"{p}:{n}" for p, n in item.expected)
        result = "error" if o.error else ("found" if o.found else "**missed**")
        fired = "; ".join(o.hits) or (o.error and escape_cell(o.error[:120])) or "-"
        lines.append(
            f"| {item.id} | {item.kind} | {escape_cell(item.title)} | "
            f"{escape_cell(item.project)}: {escape_cell(item.source)} ({item.date}) | "
            f"{expected} | {result} | {escape_cell(fired)} |"
        )
    missed = [o for o in outcomes if not o.found]
    if missed:
        lines += ["", "## Missed: what would catch them", ""]
        for o in missed:
            fired_elsewhere = sorted(set(label.split()[0] for label in o.other))
            elsewhere = (
                f" (fired elsewhere: {', '.join(fired_elsewhere)})" if fired_elsewhere else ""
            )
            need = o.item.needs or f"expected {', '.join(o.item.rules)} to fire"
            lines.append(f"- {o.item.id} {escape_cell(o.item.title)}: {need}{elsewhere}")
    return "\n".join(lines) + "\n"


def run(items: list[Item], src: Path) -> list[Outcome]:
    outcomes = []
    for item in items:
        folder = HERE / item.fixture
        try:
            outcomes.append(judge(item, scan_json(folder, src)))
        except (RuntimeError, ValueError, KeyError) as error:
            outcomes.append(Outcome(item=item, found=False, error=str(error)))
    return outcomes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="comma-separated item ids")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument("--json", type=Path, help="also write per-item outcomes as JSON")
    parser.add_argument("--src", type=Path, default=REPO / "src", help="gpuport's src folder")
    args = parser.parse_args(argv)
    items = load_items()
    if args.only:
        wanted = set(args.only.split(","))
        items = [i for i in items if i.id in wanted]
    src = args.src.resolve()
    outcomes = run(items, src)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(render(outcomes, git_commit(src)), encoding="utf-8")
    if args.json:
        rows = [
            {
                "id": o.item.id,
                "kind": o.item.kind,
                "found": o.found,
                "hits": o.hits,
                "error": o.error,
            }
            for o in outcomes
        ]
        args.json.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    by_kind = Counter(o.item.kind for o in outcomes if o.found)
    found = sum(o.found for o in outcomes)
    print(f"recall {found}/{len(outcomes)}; found by kind: {dict(by_kind)}")
    for o in outcomes:
        mark = "found " if o.found else ("ERROR " if o.error else "missed")
        print(f"{o.item.id} {mark} {'; '.join(o.hits) or o.error[:100]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
