"""``gpuport doctor``'s report in its two formats: the terminal (rich) and JSON.

Tool output and file contents reach these texts (GPU names from rocminfo, versions from sysfs),
so every string goes through :func:`display_text` (control characters shown as escapes) and is
printed as plain text, never as rich markup.
"""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text

from gpuport.doctor.model import DoctorReport, Status
from gpuport.report import Format, RenderOptions, renderer
from gpuport.report.common import console_text, display_text, dumps, memory_console, tool_version

_MARK = {
    Status.OK: ("ok", "green"),
    Status.WARNING: ("warning", "yellow"),
    Status.PROBLEM: ("PROBLEM", "bold red"),
    Status.UNKNOWN: ("could not check", "dim"),
}
SCHEMA_VERSION = 1


def doctor_json(report: DoctorReport) -> dict[str, Any]:
    """The report as JSON-ready data."""
    return {
        "verdict": report.verdict,
        "healthy": report.healthy,
        "vendor": report.vendor,
        "gpus": [
            {
                "vendor": gpu.vendor,
                "name": gpu.name,
                "arch": gpu.arch or None,
                "memory_bytes": gpu.memory_bytes,
                "source": gpu.source,
            }
            for gpu in report.gpus
        ],
        "driver": report.driver or None,
        "rocm": report.rocm or None,
        "torch": report.torch or None,
        "container": report.in_container or None,
        "counts": {status.value: report.count(status) for status in Status},
        "checks": [
            {
                "check": item.check,
                "title": item.title,
                "status": item.status.value,
                "summary": item.summary,
                "why": item.why or None,
                "fix": item.fix or None,
            }
            for item in report.diagnoses
        ],
        "probes": [
            {"probe": note.probe, "outcome": note.outcome, "ok": note.ok} for note in report.probes
        ],
    }


@renderer(DoctorReport, Format.JSON)
def render_doctor_json(report: DoctorReport, options: RenderOptions) -> str:
    document = {
        "tool": {"name": "gpuport", "version": tool_version(options)},
        "schema_version": SCHEMA_VERSION,
        **doctor_json(report),
    }
    return dumps(document)


def _line(label: str, value: str) -> Text:
    return Text.assemble((f"{label:<10}", "bold"), display_text(value))


@renderer(DoctorReport, Format.TERMINAL)
def render_doctor_terminal(report: DoctorReport, options: RenderOptions) -> str:
    """The machine in a few lines, one row per check with its fix under it, then the probes."""
    console = memory_console(options)
    verdict_style = "bold green" if report.healthy and report.gpus else "bold red"
    console.print(Text.assemble(("GPU stack: ", "bold"), (report.verdict, verdict_style)))
    console.print()
    if report.gpus:
        for gpu in report.gpus:
            arch = f" ({gpu.arch})" if gpu.arch else ""
            console.print(_line("GPU", f"{gpu.name}{arch}  [{gpu.source}]"))
    else:
        console.print(_line("GPU", "none found"))
    console.print(_line("driver", report.driver or "none"))
    console.print(_line("ROCm", report.rocm or "not installed"))
    console.print(_line("torch", report.torch or "not installed"))
    if report.in_container:
        console.print(_line("container", report.in_container))
    console.print()
    table = Table(box=None, show_header=True, pad_edge=False, expand=False)
    table.add_column("status", no_wrap=True)
    table.add_column("check", no_wrap=True)
    table.add_column("finding", overflow="fold")
    for item in report.diagnoses:
        mark, style = _MARK[item.status]
        body = Text(display_text(item.summary))
        if item.why and item.status is not Status.OK:
            body.append("\n" + display_text(item.why), style="dim")
        if item.fix:
            for number, line in enumerate(item.fix.splitlines()):
                body.append("\n" + ("fix: " if number == 0 else "     "), style="bold")
                body.append(display_text(line), style="cyan")
        table.add_row(Text(mark, style), Text(display_text(item.title)), body)
    console.print(table)
    console.print()
    console.print(Text("Looked at", style="bold"))
    for note in report.probes:
        mark = "" if note.ok else "  (could not read)"
        console.print(Text(f"  {display_text(note.probe)}: {display_text(note.outcome)}{mark}"))
    return console_text(console)
