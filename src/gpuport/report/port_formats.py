"""The summary of ``gpuport port`` in every format: per file and per API family, what was
converted, what needs review and what was left unconverted, plus the compile check.

Like a compiler's statistics: counts first, then every place that needs a person, with its
location and advice. The diff itself is not a report; ``gpuport.port.diff`` makes it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any

from gpuport.edits import ChangeStatus
from gpuport.port.model import Change, CheckStatus, CompileCheck, FileResult, PortResult
from gpuport.report import Format, RenderOptions, chunk_renderer, renderer
from gpuport.report.common import (
    TOOL_NAME,
    display_text,
    dumps,
    html_text,
    json_path,
    md_code_cell,
    md_text,
    path_uri,
    tool_version,
    with_content_security_policy,
)
from gpuport.report.json_stream import Deferred, json_chunks
from gpuport.report.sarif import SARIF_SCHEMA, SARIF_VERSION, SRCROOT, region

SCHEMA_VERSION = "1"
STATUS_ORDER = (ChangeStatus.CONVERTED, ChangeStatus.NEEDS_REVIEW, ChangeStatus.UNCONVERTED)
STATUS_KEY = {
    ChangeStatus.CONVERTED: "converted",
    ChangeStatus.NEEDS_REVIEW: "needs_review",
    ChangeStatus.UNCONVERTED: "unconverted",
}
CHECK_TEXT = {
    CheckStatus.BOTH_COMPILE: "both compile",
    CheckStatus.TRANSLATION_FAILS: "translation fails",
    CheckStatus.ORIGINAL_FAILS: "original fails too (not the translation's fault)",
    CheckStatus.NOT_COMPILED: "not compiled",
}
SARIF_LEVEL = {ChangeStatus.UNCONVERTED: "error", ChangeStatus.NEEDS_REVIEW: "warning"}
_ANSI = {"red": "\x1b[31m", "yellow": "\x1b[33m", "green": "\x1b[32m", "bold": "\x1b[1m"}
_RESET = "\x1b[0m"


# ------------------------------------------------------------------------------ counting


def _counts(changes: Iterable[Change]) -> dict[str, int]:
    counter = Counter(c.status for c in changes)
    return {STATUS_KEY[s]: counter[s] for s in STATUS_ORDER}


def family_table(result: PortResult) -> dict[str, dict[str, int]]:
    """Counts per API family (or file aspect), families in name order."""
    table: dict[str, Counter[ChangeStatus]] = {}
    for f in result.files:
        for c in f.changes:
            table.setdefault(c.family or "other", Counter())[c.status] += 1
    return {
        family: {STATUS_KEY[s]: counter[s] for s in STATUS_ORDER}
        for family, counter in sorted(table.items())
    }


def summary(result: PortResult) -> dict[str, Any]:
    totals = _counts(c for f in result.files for c in f.changes)
    checks = Counter(c.status.value for c in result.checks)
    return {
        "files": len(result.files),
        "changed": sum(1 for f in result.files if f.changed),
        "skipped": sum(1 for f in result.files if f.skipped),
        **totals,
        "problems": len(result.problems),
        "checks": {s.value: checks[s.value] for s in CheckStatus if checks[s.value]},
    }


def attention(result: PortResult) -> list[tuple[str, Change]]:
    """Every change a person must look at: unconverted first, then needs-review, file order."""
    items = [
        (f.path, c)
        for f in result.files
        for c in f.changes
        if c.status is not ChangeStatus.CONVERTED
    ]
    rank = {ChangeStatus.UNCONVERTED: 0, ChangeStatus.NEEDS_REVIEW: 1}
    items.sort(key=lambda item: (rank[item[1].status], item[0], item[1].line, item[1].column))
    return items


def _where(path: str, change: Change) -> str:
    if change.line <= 0:
        return path
    if change.column <= 0:
        return f"{path}:{change.line}"
    return f"{path}:{change.line}:{change.column}"


def _what(change: Change) -> str:
    before, after = change.before.strip(), change.after.strip()
    if change.status is ChangeStatus.UNCONVERTED or before == after:
        return before
    return f"{before} → {after}" if before else f"+ {after}"


def _check_line(check: CompileCheck) -> str:
    text = CHECK_TEXT[check.status]
    if check.status is CheckStatus.TRANSLATION_FAILS and check.translation_error:
        text += f": {check.translation_error}"
    elif check.status is CheckStatus.ORIGINAL_FAILS and check.original_error:
        text += f": {check.original_error}"
    if check.detail:
        text += f" ({check.detail})"
    return text


# ------------------------------------------------------------------------------ terminal


def _paint(text: str, colour: str, options: RenderOptions) -> str:
    return f"{_ANSI[colour]}{text}{_RESET}" if options.color else text


@renderer(PortResult, Format.TERMINAL)
def render_port_terminal(result: PortResult, options: RenderOptions) -> str:
    lines: list[str] = []
    total = summary(result)
    lines.append(
        _paint(
            f"gpuport port {display_text(result.root)} → ROCm {result.rocm_version}",
            "bold",
            options,
        )
    )
    lines += [f"note: {display_text(n)}" for n in result.notes]
    if not result.files:
        lines.append("nothing to port: no CUDA sources or CUDA-specific files found")
    else:
        width = max(24, *(len(display_text(f.path)) for f in result.files))
        header = f"{'file':<{width}}  {'converted':>9}  {'review':>6}  {'unconverted':>11}"
        lines += ["", header]
        for f in result.files:
            n = _counts(f.changes)
            name = display_text(f.path)
            if f.skipped:
                lines.append(f"{name:<{width}}  skipped: {display_text(f.skipped)}")
                continue
            lines.append(
                f"{name:<{width}}  {n['converted']:>9}  {n['needs_review']:>6}  "
                f"{n['unconverted']:>11}"
            )
        label = f"total ({total['files']} files, {total['changed']} changed)"
        lines.append(
            f"{label:<{width}}  {total['converted']:>9}  {total['needs_review']:>6}  "
            f"{total['unconverted']:>11}"
        )
        families = family_table(result)
        if families:
            fwidth = max(12, *(len(k) for k in families))
            lines += [
                "",
                f"{'family':<{fwidth}}  {'converted':>9}  {'review':>6}  {'unconverted':>11}",
            ]
            for family, n in families.items():
                lines.append(
                    f"{display_text(family):<{fwidth}}  {n['converted']:>9}  {n['needs_review']:>6}  "
                    f"{n['unconverted']:>11}"
                )
    items = attention(result)
    if items:
        lines += ["", _paint("needs a person:", "bold", options)]
        for path, c in items:
            colour = "red" if c.status is ChangeStatus.UNCONVERTED else "yellow"
            status = _paint(c.status.value, colour, options)
            rule = f" {c.rule_id}" if c.rule_id else ""
            lines.append(
                f"  {display_text(_where(path, c))}: {status} [{display_text(c.family + rule)}] "
                f"{display_text(_what(c))}"
            )
            if c.note:
                lines.append(f"      {display_text(c.note)}")
    if result.checks:
        lines += ["", _paint("compile check (nvcc original · hipcc translation):", "bold", options)]
        for check in result.checks:
            colour = {
                CheckStatus.BOTH_COMPILE: "green",
                CheckStatus.TRANSLATION_FAILS: "red",
            }.get(check.status, "yellow")
            lines.append(
                f"  {display_text(check.path)}: "
                f"{_paint(display_text(_check_line(check)), colour, options)}"
            )
    if result.problems:
        lines += ["", _paint("problems:", "bold", options)]
        lines += [f"  {display_text(p)}" for p in result.problems]
    lines += [
        "",
        f"{total['converted']} converted · {total['needs_review']} need review · "
        f"{total['unconverted']} unconverted · {total['problems']} problem(s)",
    ]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------- json


def _change_dict(c: Change) -> dict[str, Any]:
    return {
        "line": c.line,
        "column": c.column,
        "family": c.family,
        "status": c.status.value,
        "before": display_text(c.before),
        "after": display_text(c.after),
        "note": display_text(c.note),
        "rule_id": c.rule_id,
    }


def port_document(result: PortResult, options: RenderOptions) -> dict[str, Any]:
    """The port as a JSON-ready document (stable key order, no timestamps)."""
    return {
        "tool": TOOL_NAME,
        "version": tool_version(options),
        "schema_version": SCHEMA_VERSION,
        "kind": "port",
        "root": display_text(result.root),
        "rocm_version": result.rocm_version,
        "notes": [display_text(n) for n in result.notes],
        "summary": summary(result),
        "families": family_table(result),
        # made one file at a time as the text is written (issue 10: memory)
        "files": Deferred(lambda: (_file_dict(f) for f in result.files)),
        "checks": [
            {
                **json_path(c.path, display_text(c.path)),
                "status": c.status.value,
                "original_error": display_text(c.original_error),
                "translation_error": display_text(c.translation_error),
                "detail": display_text(c.detail),
            }
            for c in result.checks
        ],
        "problems": [display_text(p) for p in result.problems],
    }


def _file_dict(f: FileResult) -> dict[str, Any]:
    return {
        **json_path(f.path, display_text(f.path)),
        "new_path": display_text(f.new_path),
        "kind": f.kind,
        "changed": f.changed,
        "skipped": display_text(f.skipped),
        **_counts(f.changes),
        "changes": [_change_dict(c) for c in f.changes],
    }


@chunk_renderer(PortResult, Format.JSON)
def render_port_json(result: PortResult, options: RenderOptions) -> Iterator[str]:
    return json_chunks(port_document(result, options))


# ------------------------------------------------------------------------------ markdown


@renderer(PortResult, Format.MARKDOWN)
def render_port_markdown(result: PortResult, options: RenderOptions) -> str:
    total = summary(result)
    out = [
        f"# gpuport port: {md_text(result.root)} → ROCm {result.rocm_version}",
        "",
        f"{total['changed']} of {total['files']} files changed · {total['converted']} converted · "
        f"{total['needs_review']} need review · {total['unconverted']} unconverted · "
        f"{total['problems']} problem(s)",
        "",
        *(f"> **Note:** {md_text(n)}\n" for n in result.notes),
    ]
    if result.files:
        out += ["| file | converted | needs review | unconverted |", "|---|---:|---:|---:|"]
        for f in result.files:
            n = _counts(f.changes)
            name = md_code_cell(f.path) + (f" (skipped: {md_text(f.skipped)})" if f.skipped else "")
            out.append(f"| {name} | {n['converted']} | {n['needs_review']} | {n['unconverted']} |")
        out.append("")
    families = family_table(result)
    if families:
        out += ["## By family", "", "| family | converted | needs review | unconverted |"]
        out.append("|---|---:|---:|---:|")
        for family, n in families.items():
            out.append(
                f"| {md_text(family)} | {n['converted']} | {n['needs_review']} | {n['unconverted']} |"
            )
        out.append("")
    items = attention(result)
    if items:
        out += ["## Needs a person", "", "| where | status | family | what | advice |"]
        out.append("|---|---|---|---|---|")
        for path, c in items:
            family = c.family + (f" ({c.rule_id})" if c.rule_id else "")
            out.append(
                f"| {md_code_cell(_where(path, c))} | {c.status.value} | {md_text(family)} | "
                f"{md_code_cell(_what(c)) if _what(c) else ''} | {md_text(c.note)} |"
            )
        out.append("")
    if result.checks:
        out += ["## Compile check", "", "| file | result |", "|---|---|"]
        out += [f"| {md_code_cell(c.path)} | {md_text(_check_line(c))} |" for c in result.checks]
        out.append("")
    if result.problems:
        out += ["## Problems", ""] + [f"- {md_text(p)}" for p in result.problems] + [""]
    return "\n".join(out)


# ---------------------------------------------------------------------------------- html


_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#222}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:.25em .6em}
th{background:#f3f3f3;text-align:left}td.n{text-align:right}code{font-size:13px}
.unconverted{color:#b00020;font-weight:600}.needs-review{color:#8a5a00;font-weight:600}
.both-compile{color:#1b7f2a}.translation-fails{color:#b00020;font-weight:600}
"""


def _counts_row(label: str, counts: dict[str, int]) -> str:
    """One table row: ``label`` (already HTML) and its converted / review / unconverted counts."""
    cells = "".join(f"<td class=n>{counts[STATUS_KEY[status]]}</td>" for status in STATUS_ORDER)
    return f"<tr><td>{label}</td>{cells}</tr>"


def _counts_table(first_column: str, rows: list[str]) -> str:
    return (
        f"<table><tr><th>{first_column}</th><th>converted</th><th>needs review</th>"
        "<th>unconverted</th></tr>" + "".join(rows) + "</table>"
    )


@renderer(PortResult, Format.HTML)
def render_port_html(result: PortResult, options: RenderOptions) -> str:
    total = summary(result)
    body = [
        f"<h1>gpuport port: {html_text(result.root)} → ROCm {html_text(result.rocm_version)}</h1>",
        f"<p>{total['changed']} of {total['files']} files changed · {total['converted']} converted"
        f" · {total['needs_review']} need review · {total['unconverted']} unconverted · "
        f"{total['problems']} problem(s)</p>",
        *(f"<p class='note'><strong>Note:</strong> {html_text(n)}</p>" for n in result.notes),
    ]
    if result.files:
        rows = []
        for f in result.files:
            n = _counts(f.changes)
            skipped = f" (skipped: {html_text(f.skipped)})" if f.skipped else ""
            rows.append(_counts_row(f"<code>{html_text(f.path)}</code>{skipped}", n))
        body.append(_counts_table("file", rows))
    families = family_table(result)
    if families:
        rows = [_counts_row(html_text(k), n) for k, n in families.items()]
        body.append("<h2>By family</h2>" + _counts_table("family", rows))
    items = attention(result)
    if items:
        rows = [
            f"<tr><td><code>{html_text(_where(p, c))}</code></td>"
            f"<td class='{c.status.value}'>{c.status.value}</td><td>{html_text(c.family)}"
            f"{' ' + html_text(c.rule_id) if c.rule_id else ''}</td><td><code>{html_text(_what(c))}</code></td>"
            f"<td>{html_text(c.note)}</td></tr>"
            for p, c in items
        ]
        body.append(
            "<h2>Needs a person</h2><table><tr><th>where</th><th>status</th><th>family</th>"
            "<th>what</th><th>advice</th></tr>" + "".join(rows) + "</table>"
        )
    if result.checks:
        rows = [
            f"<tr><td><code>{html_text(c.path)}</code></td>"
            f"<td class='{c.status.value}'>{html_text(_check_line(c))}</td></tr>"
            for c in result.checks
        ]
        body.append(
            "<h2>Compile check</h2><table><tr><th>file</th><th>result</th></tr>"
            + "".join(rows)
            + "</table>"
        )
    if result.problems:
        body.append(
            "<h2>Problems</h2><ul>"
            + "".join(f"<li>{html_text(p)}</li>" for p in result.problems)
            + "</ul>"
        )
    return with_content_security_policy(
        "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
        f"<title>gpuport port: {html_text(result.root)}</title><style>{_CSS}</style></head><body>\n"
        + "\n".join(body)
        + f"\n<footer><p>{TOOL_NAME} {html_text(tool_version(options))}</p></footer></body></html>\n"
    )


# --------------------------------------------------------------------------------- sarif


def _rule_id(change: Change) -> str:
    return change.rule_id or f"port/{change.family or 'other'}"


@renderer(PortResult, Format.SARIF)
def render_port_sarif(result: PortResult, options: RenderOptions) -> str:
    """What still needs a person, as SARIF 2.1.0 results (converted changes are left out)."""
    items = attention(result)
    failed = [c for c in result.checks if c.status is CheckStatus.TRANSLATION_FAILS]
    rule_ids = sorted({_rule_id(c) for _, c in items} | ({"port/compile"} if failed else set()))
    rule_index = {rid: i for i, rid in enumerate(rule_ids)}
    rules = [
        {
            "id": rid,
            "shortDescription": {
                "text": "The translation does not compile with hipcc"
                if rid == "port/compile"
                else f"gpuport port could not finish this ({rid})"
            },
        }
        for rid in rule_ids
    ]
    results: list[dict[str, Any]] = []
    for path, c in items:
        location: dict[str, Any] = {
            "artifactLocation": {"uri": path_uri(path), "uriBaseId": SRCROOT}
        }
        where = region(c.line, c.column)
        if where:
            location["region"] = where
        text = f"{_what(c)}: {c.note}" if c.note else _what(c) or c.family
        rid = _rule_id(c)
        results.append(
            {
                "ruleId": rid,
                "ruleIndex": rule_index[rid],
                "level": SARIF_LEVEL[c.status],
                "message": {"text": display_text(text)},
                "locations": [{"physicalLocation": location}],
                "properties": {"status": c.status.value, "family": c.family},
            }
        )
    for check in failed:
        results.append(
            {
                "ruleId": "port/compile",
                "ruleIndex": rule_index["port/compile"],
                "level": "error",
                "message": {"text": display_text(_check_line(check))},
                "locations": [
                    {
                        "physicalLocation": {
                            "artifactLocation": {
                                "uri": path_uri(check.path),
                                "uriBaseId": SRCROOT,
                            }
                        }
                    }
                ],
            }
        )
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": TOOL_NAME,
                "version": tool_version(options),
                "rules": rules,
            }
        },
        "invocations": [
            {
                "executionSuccessful": True,
                "toolExecutionNotifications": [
                    *(
                        {"level": "note", "message": {"text": display_text(n)}}
                        for n in result.notes
                    ),
                    *(
                        {"level": "warning", "message": {"text": display_text(p)}}
                        for p in result.problems
                    ),
                ],
            }
        ],
        "originalUriBaseIds": {
            SRCROOT: {"description": {"text": "The root of the ported project."}}
        },
        "columnKind": "unicodeCodePoints",
        "results": results,
        "properties": {"rocmVersion": result.rocm_version, "summary": summary(result)},
    }
    return dumps({"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]})
