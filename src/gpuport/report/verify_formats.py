"""``gpuport verify compare`` in the terminal, JSON, Markdown and HTML.

Case names, notes, layer names and machine descriptions come from a reference file recorded on
another machine (untrusted), so every string is escaped for the format it lands in.
"""

from __future__ import annotations

import math
from typing import Any

from rich import box
from rich.table import Table
from rich.text import Text

from gpuport.machine import MachineDescription
from gpuport.report import Format, RenderOptions, renderer
from gpuport.report.common import (
    TOOL_NAME,
    console_text,
    display_text,
    dumps,
    html_text,
    md_text,
    memory_console,
    plural,
    with_content_security_policy,
)
from gpuport.verify.result import (
    CaseComparison,
    CaseStatus,
    Closer,
    OutputComparison,
    VerifyComparison,
)

# A failing model case lists its outputs (layers) up to the first drift and a few after it.
OUTPUTS_AFTER_FIRST_FAILURE = 3
_STATUS_STYLE = {
    CaseStatus.PASS: "green",
    CaseStatus.FAIL: "bold red",
    CaseStatus.SKIPPED: "yellow",
    CaseStatus.ERROR: "bold magenta",
}
_CLOSER_WORDS = {Closer.RECORDED: "recorded", Closer.HERE: "here", Closer.TIE: "tie"}


def _num(value: float) -> str:
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf"
    if value == 0:
        return "0"
    return f"{value:.2e}"


def _share(value: float) -> str:
    if value == 0:
        return "0%"
    percent = value * 100
    return f"{percent:.2f}%" if percent >= 0.01 else "<0.01%"


def _json_num(value: float) -> float | None:
    return value if math.isfinite(value) else None  # JSON has no inf/NaN: null, see "finite"


def _title(result: VerifyComparison) -> str:
    what = f"model {result.model}" if result.kind == "model" and result.model else "op suite"
    return f"{result.file}: {what}"


def _summary(result: VerifyComparison) -> str:
    counts = [
        f"{result.count(status)} {status.value}"
        for status in CaseStatus
        if result.count(status) or status in (CaseStatus.PASS, CaseStatus.FAIL)
    ]
    return f"{plural(len(result.cases), 'case')}: " + ", ".join(counts)


def _machine_line(label: str, machine: MachineDescription) -> str:
    builds = [f"torch {machine.torch}" if machine.torch else "no torch"]
    if machine.cuda:
        builds.append(f"CUDA {machine.cuda}")
    if machine.hip:
        builds.append(f"HIP {machine.hip}")
    if machine.driver:
        builds.append(machine.driver)
    return f"{label}: {machine.label} ({machine.accelerator}; {', '.join(builds)})"


def _machine_lines(result: VerifyComparison) -> list[str]:
    return [
        _machine_line("recorded on", result.recorded),
        _machine_line(f"compared on ({result.device})", result.here),
    ]


def _tolerance_line(result: VerifyComparison) -> str:
    if not result.tolerances:
        return "tolerances: none used"
    parts = [
        f"{t.dtype} rtol {t.rtol:g} atol {t.atol:g}" + (" (--tolerance)" if t.overridden else "")
        for t in result.tolerances
    ]
    return "tolerances (assert_close defaults unless marked): " + "; ".join(parts)


def _row(case: CaseComparison) -> tuple[str, ...]:
    """The columns of one case: its worst output's numbers."""
    shown = case.first_failure or case.worst
    if shown is None:
        return ("—",) * 7
    return (
        _num(shown.max_abs),
        _num(shown.max_rel),
        _share(shown.out_of_tolerance),
        _num(shown.atol_needed),
        _num(shown.rtol_needed),
        _CLOSER_WORDS[shown.closer],
        f"{_num(shown.recorded_error)} / {_num(shown.here_error)}",
    )


def _case_notes(case: CaseComparison) -> list[str]:
    notes = []
    first = case.first_failure
    if first is not None and len(case.outputs) > 1:
        failing = sum(1 for o in case.outputs if not o.passed)
        notes.append(
            f"first output out of tolerance: {first.name} "
            f"({failing} of {len(case.outputs)} outputs out of tolerance)"
        )
    if case.note:
        notes.append(case.note)
    return notes


def _listed_outputs(case: CaseComparison) -> list[OutputComparison]:
    """A failing case's outputs up to its first failure and a few after (the drift's start)."""
    first = case.first_failure
    if first is None or len(case.outputs) <= 1:
        return []
    at = case.outputs.index(first)
    return list(case.outputs[max(0, at - 1) : at + 1 + OUTPUTS_AFTER_FIRST_FAILURE])


_HEADERS = (
    "case",
    "result",
    "max abs",
    "max rel",
    "out of tol",
    "atol needed",
    "rtol needed",
    "closer to fp64",
    "fp64 error rec / here",
)

# --- terminal --------------------------------------------------------------------------------


@renderer(VerifyComparison, Format.TERMINAL)
def render_verify_terminal(result: VerifyComparison, options: RenderOptions) -> str:
    console = memory_console(options)
    console.print(Text(f"gpuport verify: {display_text(_title(result))}", style="bold"))
    for line in _machine_lines(result):
        console.print(Text(display_text(line)))
    if result.tolerances:  # one dtype a line, so a narrow terminal never splits one
        console.print(Text("tolerances (assert_close defaults unless marked):"))
        for t in result.tolerances:
            marked = " (--tolerance)" if t.overridden else ""
            console.print(Text(f"  {t.dtype}: rtol {t.rtol:g}, atol {t.atol:g}{marked}"))
    else:
        console.print(Text(_tolerance_line(result)))
    for note in result.notes:
        console.print(Text(f"note: {display_text(note)}", style="yellow"))
    console.print()
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    longest = max((len(display_text(case.name)) for case in result.cases), default=4)
    table.add_column("case", overflow="fold", min_width=min(longest, 24))
    for header in ("result", "max abs", "max rel", "out tol", "atol", "rtol"):
        table.add_column(header, no_wrap=True)
    table.add_column("closer", no_wrap=True)
    for case in result.cases:
        table.add_row(
            Text(display_text(case.name)),
            Text(case.status.value, style=_STATUS_STYLE[case.status]),
            *_row(case)[:6],
        )
    console.print(table)
    console.print(
        Text(
            "out tol: share of elements out of tolerance; atol, rtol: the smallest that pass; "
            "closer: the machine nearer the fp64 reference"
        )
    )
    for case in result.cases:
        notes = _case_notes(case)
        for note in notes:
            console.print(Text(f"{display_text(case.name)}: {display_text(note)}"))
        for output in _listed_outputs(case):
            mark = "ok " if output.passed else "OUT"
            console.print(
                Text(
                    f"  {mark} {display_text(output.name)}: max abs {_num(output.max_abs)}, "
                    f"{_share(output.out_of_tolerance)} out of tolerance"
                )
            )
    console.print()
    console.print(Text(_summary(result), style="bold"))
    return console_text(console)


# --- JSON ------------------------------------------------------------------------------------


def _output_json(output: OutputComparison) -> dict[str, Any]:
    values = (
        output.max_abs,
        output.max_rel,
        output.atol_needed,
        output.rtol_needed,
        output.recorded_error,
        output.here_error,
    )
    return {
        "name": output.name,
        "dtype": output.dtype,
        "shape": list(output.shape),
        "passed": output.passed,
        "max_abs_error": _json_num(output.max_abs),
        "max_rel_error": _json_num(output.max_rel),
        "out_of_tolerance_share": output.out_of_tolerance,
        "atol_needed": _json_num(output.atol_needed),
        "rtol_needed": _json_num(output.rtol_needed),
        "fp64_error_recorded": _json_num(output.recorded_error),
        "fp64_error_here": _json_num(output.here_error),
        "closer_to_fp64": output.closer.value,
        "finite": all(math.isfinite(v) for v in values),
    }


def verify_json(result: VerifyComparison) -> dict[str, Any]:
    return {
        "file": result.file,
        "recording": result.kind,
        "model": result.model,
        "device": result.device,
        "recorded_on": result.recorded.to_dict(),
        "compared_on": result.here.to_dict(),
        "tolerances": [
            {"dtype": t.dtype, "rtol": t.rtol, "atol": t.atol, "overridden": t.overridden}
            for t in result.tolerances
        ],
        "notes": list(result.notes),
        "passed": result.passed,
        "counts": {status.value: result.count(status) for status in CaseStatus},
        "cases": [
            {
                "name": case.name,
                "status": case.status.value,
                "note": case.note,
                "nondeterministic": case.nondeterministic,
                "first_failure": case.first_failure.name if case.first_failure else None,
                "outputs": [_output_json(o) for o in case.outputs],
            }
            for case in result.cases
        ],
    }


@renderer(VerifyComparison, Format.JSON)
def render_verify_json(result: VerifyComparison, options: RenderOptions) -> str:
    document: dict[str, Any] = {
        "tool": TOOL_NAME,
        "version": options.tool_version,
        "kind": "verify",
    }
    document.update(verify_json(result))
    return dumps(document)


# --- Markdown --------------------------------------------------------------------------------


@renderer(VerifyComparison, Format.MARKDOWN)
def render_verify_markdown(result: VerifyComparison, options: RenderOptions) -> str:
    lines = [f"# gpuport verify: {md_text(_title(result))}", ""]
    lines += [f"- {md_text(line)}" for line in _machine_lines(result)]
    lines += [f"- {md_text(_tolerance_line(result))}"]
    lines += [f"- note: {md_text(note)}" for note in result.notes]
    lines += [f"- **{md_text(_summary(result))}**", ""]
    lines.append("| " + " | ".join(_HEADERS) + " |")
    lines.append("|" + "---|" * len(_HEADERS))
    for case in result.cases:
        status = case.status.value
        if case.status in (CaseStatus.FAIL, CaseStatus.ERROR):
            status = f"**{status}**"
        cells = [md_text(case.name), status, *(md_text(c) for c in _row(case))]
        lines.append("| " + " | ".join(cells) + " |")
    notes = [(case, note) for case in result.cases for note in _case_notes(case)]
    if notes:
        lines += ["", "## Notes", ""]
        lines += [f"- {md_text(case.name)}: {md_text(note)}" for case, note in notes]
    for case in result.cases:
        listed = _listed_outputs(case)
        if listed:
            lines += ["", f"## {md_text(case.name)}: where it drifts", ""]
            lines += ["| output | result | max abs | out of tol |", "|---|---|---|---|"]
            lines += [
                f"| {md_text(o.name)} | {'pass' if o.passed else '**fail**'} | "
                f"{_num(o.max_abs)} | {md_text(_share(o.out_of_tolerance))} |"
                for o in listed
            ]
    return "\n".join(lines) + "\n"


# --- HTML ------------------------------------------------------------------------------------


def _verdict(result: VerifyComparison) -> tuple[str, str]:
    """The page's one-line answer and its class: fail, error or pass (as the exit code)."""
    failed, errors = result.count(CaseStatus.FAIL), result.count(CaseStatus.ERROR)
    out_of_tolerance = f"{failed} of {plural(len(result.cases), 'case')} out of tolerance"
    if errors:
        also = f"; {out_of_tolerance}" if failed else ""
        return "error", f"Error: {plural(errors, 'case')} could not be compared{also}"
    if failed:
        return "fail", f"Fail: {out_of_tolerance}"
    if not result.count(CaseStatus.PASS):
        return "error", "Error: no case could be compared here"
    return "pass", "Pass: every compared case within tolerance"


_HTML_STYLE = (
    "body{font-family:system-ui,sans-serif;margin:2rem auto;padding:0 1rem;max-width:1200px}"
    "table{border-collapse:collapse;font-size:13px}"
    "th,td{border:1px solid #ccc;padding:4px 6px;vertical-align:top}"
    "h1,h2,li,p{overflow-wrap:anywhere}"  # a long path or host name wraps on a phone
    "td.num{white-space:nowrap;font-variant-numeric:tabular-nums}"
    ".scroll{max-width:100%;overflow-x:auto}"
    ".fail,.error{color:#b00020;font-weight:bold}.pass{color:#1b7f3b}.skipped{color:#8a6d00}"
    "#verdict{font-size:1.25rem;font-weight:bold;padding:.5rem .75rem;border-left:6px solid}"
    "#verdict.pass{background:#e8f5ec}#verdict.fail,#verdict.error{background:#fdecee}"
    "tr.first-drift td{background:#fdecee}"
    "@media (max-width:600px){body{margin:1rem auto;padding:0 .5rem}h1{font-size:1.4rem}}"
)


@renderer(VerifyComparison, Format.HTML)
def render_verify_html(result: VerifyComparison, options: RenderOptions) -> str:
    head = "".join(f"<th>{html_text(h)}</th>" for h in _HEADERS)
    rows = "".join(
        f"<tr><td>{html_text(case.name)}</td>"
        f'<td class="{case.status.value}">{case.status.value}</td>'
        + "".join(f'<td class="num">{html_text(cell)}</td>' for cell in _row(case))
        + "</tr>"
        for case in result.cases
    )
    about = "".join(
        f"<li>{html_text(line)}</li>"
        for line in (
            *_machine_lines(result),
            _tolerance_line(result),
            *(f"note: {note}" for note in result.notes),
        )
    )
    notes = "".join(
        f"<li>{html_text(case.name)}: {html_text(note)}</li>"
        for case in result.cases
        for note in _case_notes(case)
    )
    drift = ""
    for case in result.cases:
        listed = _listed_outputs(case)
        if listed:
            drift += (
                f"<h2>{html_text(case.name)}: where it drifts</h2>"
                '<div class="scroll"><table><tr><th>output</th>'
                "<th>result</th><th>max abs</th><th>out of tol</th></tr>"
                + "".join(
                    ('<tr class="first-drift">' if o is case.first_failure else "<tr>")
                    + f"<td>{html_text(o.name)}"
                    + (" (first to drift)" if o is case.first_failure else "")
                    + "</td>"
                    f'<td class="{"pass" if o.passed else "fail"}">'
                    f"{'pass' if o.passed else 'fail'}</td>"
                    f'<td class="num">{_num(o.max_abs)}</td>'
                    f'<td class="num">{html_text(_share(o.out_of_tolerance))}</td></tr>'
                    for o in listed
                )
                + "</table></div>"
            )
    verdict_class, verdict = _verdict(result)
    return with_content_security_policy(
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>gpuport verify: {html_text(result.file)}</title>"
        f"<style>{_HTML_STYLE}</style></head>"
        f"<body><h1>gpuport verify: {html_text(_title(result))}</h1>"
        f'<p id="verdict" class="{verdict_class}">{html_text(verdict)}</p><ul>{about}</ul>'
        f"<p><strong>{html_text(_summary(result))}</strong></p>"
        f'<div class="scroll"><table><tr>{head}</tr>{rows}</table></div>'
        + (f"<h2>Notes</h2><ul>{notes}</ul>" if notes else "")
        + drift
        + f"<footer><p>gpuport {html_text(options.tool_version)}</p></footer></body></html>\n"
    )
