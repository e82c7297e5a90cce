"""``gpuport port PATH``: translate a project to ROCm and show, write or apply the result.

By default the unified diff goes to stdout and the summary to stderr. ``--out DIR`` writes a
translated copy of the whole tree, ``--in-place`` edits the files (keeping backups). Exit
codes: 0 everything converted, 1 something left unconverted or a translation that does not
compile, 2 a usage or input error (or an internal error, which is reported).
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import click

from gpuport.cli.common import (
    CommandError,
    ExitCode,
    check_project_path,
    format_options,
    handle_errors,
    no_progress_option,
    path_argument,
    render_options,
)
from gpuport.cli.ui import Progress, emit, say, write_stderr, write_stdout_bytes
from gpuport.config import load_settings
from gpuport.edits import ChangeStatus
from gpuport.files import DEFAULT_BACKUP_SUFFIX, PORT_JOURNAL_NAME
from gpuport.io import refuse_outputs
from gpuport.port.apimap import default_rocm_version, parse_version, version_facts, version_text
from gpuport.port.check import (
    DEFAULT_OFFLOAD_ARCH,
    CheckOptions,
    check_project,
    hipcc_version,
)
from gpuport.port.diff import file_diff
from gpuport.port.in_place import (
    JournalError,
    project_base,
    recover,
    write_in_place,
)
from gpuport.port.model import CheckStatus, FileResult, PortResult
from gpuport.port.project import FileCallback, port_project
from gpuport.port.translate.includes import INCLUDE_STYLES
from gpuport.port.write import TranslationWriter, copy_tree, write_tree_copy
from gpuport.report import Format, render, render_chunks
from gpuport.report.common import visible_lines
from gpuport.report.summary import port_summary_line


def _rocm_version(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is None:
        return None
    try:
        parse_version(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None
    return value.strip()


def _backup_suffix(ctx: click.Context, param: click.Parameter, value: str) -> str:
    """A suffix that makes FILE + SUFFIX a new name in FILE's own folder."""
    if value in ("", ".", "..") or "/" in value or os.sep in value or "\0" in value:
        raise click.BadParameter(
            f"{value!r} does not make a backup name beside each file: use a suffix such as "
            f"{DEFAULT_BACKUP_SUFFIX} or .bak, without a path separator"
        )
    return value


def _target_version(requested: str | None, run_check: bool) -> tuple[str, str]:
    """The ROCm release to translate for, and a note when it is not the one asked for: as
    asked; else, when --check will compile with an older hipcc, that hipcc's release (so the
    check means something); else the default."""
    if requested is not None:
        return requested, ""
    default = default_rocm_version()
    if not run_check:
        return default, ""
    hip = hipcc_version(CheckOptions().hipcc)
    if hip is None or hip >= parse_version(default)[:2]:
        return default, ""
    found = f"{hip[0]}.{hip[1]}"
    return found, retarget_note(found, default)


def retarget_note(found: str, default: str) -> str:
    """Why the port targets ROCm ``found`` rather than ``default``, and what that changes in
    the translation (kb/rocm_versions.toml): said in the report itself."""
    differences = version_facts().between(parse_version(found), parse_version(default))
    changed = "".join(
        f"; {d.id} (ROCm {version_text(d.since)}+: {d.what}): here {d.older}" for d in differences
    )
    return (
        f"translating for ROCm {found}, the release of the hipcc that --check compiles with, "
        f"not the default {default}: names that came later are not used "
        f"(pass --rocm-version {default} or another to choose){changed}"
    )


@click.command("port")
@path_argument
@click.option(
    "--rocm-version",
    callback=_rocm_version,
    help="The ROCm release to translate for; names it lacks are reported, not used. "
    f"Default: {default_rocm_version()}, or with --check the release of an older hipcc.",
)
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Write a translated copy of the whole tree to DIR (which must be empty).",
)
@click.option("--in-place", is_flag=True, help="Edit the files themselves (with backups).")
@click.option(
    "--backup-suffix",
    default=DEFAULT_BACKUP_SUFFIX,
    callback=_backup_suffix,
    show_default=True,
    help="With --in-place: each edited file's original is kept as FILE + SUFFIX.",
)
@click.option("--force", is_flag=True, help="Write into a non-empty --out DIR; replace backups.")
@click.option(
    "--check",
    "run_check",
    is_flag=True,
    help="Compile each original with nvcc and each translation with hipcc, and report both.",
)
@click.option(
    "--offload-arch",
    show_default=f"{DEFAULT_OFFLOAD_ARCH}, or [tool.gpuport] offload-arch",
    help="The AMD GPU target hipcc compiles for with --check (gfx90a = MI200, gfx942 = MI300).",
)
@click.option(
    "--fix-warp-masks",
    is_flag=True,
    help="Also widen full-warp masks of 32 lanes held in 64-bit types (0xffffffffULL), which "
    "compile but cover half a wave64; 32-bit masks, which HIP's _sync functions reject, are "
    "always widened.",
)
@click.option(
    "--translate-strings",
    is_flag=True,
    help="Also rename CUDA names inside string literals and comments.",
)
@click.option(
    "--include-style",
    type=click.Choice(INCLUDE_STYLES),
    default="auto",
    show_default=True,
    help="ROCm library headers as hipblas/hipblas.h (nested) or hipblas.h (flat); auto: the "
    "style of the target release (nested from ROCm 5.2).",
)
@click.option("--exclude", multiple=True, help="Glob of paths to leave out (repeatable).")
@format_options(
    PortResult,
    format_help="Format of the summary. Without -o, a non-terminal summary goes to stdout in "
    "place of the diff.",
    output_help="Write the summary to FILE (atomically).",
)
@no_progress_option
@handle_errors
def port(
    path: Path,
    rocm_version: str | None,
    out_dir: Path | None,
    in_place: bool,
    backup_suffix: str,
    force: bool,
    run_check: bool,
    offload_arch: str | None,
    fix_warp_masks: bool,
    translate_strings: bool,
    include_style: str,
    exclude: tuple[str, ...],
    fmt: str,
    output: Path | None,
    no_progress: bool,
) -> None:
    """Translate CUDA in PATH to HIP and rewrite the files around it for ROCm.

    Shows exactly what changed (a unified diff, by default) and what still needs a person.
    """
    check_project_path(path)
    _validate(path, out_dir, in_place, force)
    refuse_outputs(path, output)
    recovery_problems = _recover(path) if in_place else []
    settings = load_settings(path)
    # Flags win; then [tool.gpuport] in the nearest pyproject.toml; then the defaults.
    if rocm_version is None and settings.source_of("rocm_version") != "default":
        rocm_version = settings.rocm_version
    if offload_arch is None:
        offload_arch = settings.offload_arch
    exclude = exclude or settings.exclude
    target, retargeted = _target_version(rocm_version, run_check)
    if retargeted:
        say(f"note: {retargeted}")
    chosen = Format(fmt)
    report_on_stdout = chosen is not Format.TERMINAL and output is None
    diff_on_stdout = out_dir is None and not in_place and not report_on_stdout
    # Each file is written as its port is done and its texts dropped (issue 10), except with
    # --check (which compiles the translations afterwards) and --in-place (whose journal
    # names every file before the first edit, so that a kill can be rolled back).
    streamed = not run_check and not in_place
    write_problems: list[str] = []
    on_file: FileCallback | None = None
    if streamed and out_dir is not None:
        write_problems = copy_tree(path, out_dir)
        on_file = TranslationWriter(path, out_dir, write_problems).write
    elif streamed and diff_on_stdout:
        on_file = _write_diff
    # a progress bar on the terminal would tear a diff streamed to the same terminal
    show_progress = not no_progress and not (on_file is _write_diff and sys.stdout.isatty())
    with Progress(enabled=show_progress, label="porting") as progress:
        result = port_project(
            path,
            target,
            fix_warp_masks=fix_warp_masks,
            translate_strings=translate_strings,
            include_style=include_style,
            exclude=exclude,
            backup_suffix=backup_suffix,
            progress=progress.update,
            display_root=str(path),
            on_file=on_file,
            release_texts=streamed,
        )
    if retargeted:
        result.notes.append(retargeted)
    if run_check:
        _run_check(path, result, offload_arch, no_progress)
    if out_dir is not None:
        if not streamed:
            write_problems = write_tree_copy(path, result, out_dir)
        say(f"wrote the translated tree to {out_dir}")
    elif in_place:
        write_problems = write_in_place(path, result, backup_suffix, force)
    result.problems.extend(recovery_problems + write_problems)
    if diff_on_stdout and not streamed:
        _write_diff(*result.files)
    # The terminal summary goes to stderr, beside the diff on stdout.
    options = render_options(chosen, output, stream=sys.stderr)
    if output is not None or report_on_stdout:
        emit(render_chunks(result, chosen, options), output)  # JSON: one file at a time
    else:
        write_stderr(render(result, chosen, options))
    if chosen is not Format.TERMINAL:
        say(port_summary_line(result))
    sys.exit(port_exit_code(result))


def _write_diff(*files: FileResult) -> None:
    """The diffs of ``files`` on stdout: byte-exact for git apply; made visible on a terminal."""
    diff = "".join(chunk for file in files for chunk in file_diff(file))
    write_stdout_bytes(visible_lines(diff) if sys.stdout.isatty() else diff)


def _recover(path: Path) -> list[str]:
    """Finish what an interrupted ``--in-place`` run left (see port.in_place); its problems."""
    try:
        recovery = recover(path)
    except JournalError as exc:
        raise CommandError(str(exc)) from None
    if recovery.found:
        say(
            f"note: recovered an interrupted port --in-place: {recovery.kept} translated "
            f"file(s) kept with their backups, {recovery.rolled_back} left as they were "
            f"(ported now), {recovery.temporaries} temporary file(s) removed"
        )
    return recovery.problems


def _validate(path: Path, out_dir: Path | None, in_place: bool, force: bool) -> None:
    if not path.exists():
        raise CommandError(f"{path}: no such file or directory")
    if out_dir is not None and in_place:
        raise CommandError("--out and --in-place do not go together: choose one")
    if not in_place and os.path.lexists(project_base(path) / PORT_JOURNAL_NAME):
        say(
            f"note: an interrupted port --in-place left {PORT_JOURNAL_NAME}: some files may "
            "be translated already (port --in-place again finishes the job)"
        )
    if out_dir is None:
        return
    source = path.resolve()
    target = out_dir.resolve()
    source_dir = source if source.is_dir() else source.parent
    if target == source_dir or source_dir in target.parents:
        raise CommandError(f"--out {out_dir} is inside {path}: choose a folder outside it")
    if target in source_dir.parents:
        raise CommandError(
            f"--out {out_dir} holds {path}: the copy would mix with the project; "
            "choose a folder outside it"
        )
    if target.exists() and not target.is_dir():
        raise CommandError(f"--out {out_dir} exists and is not a folder")
    if target.is_dir() and any(target.iterdir()) and not force:
        raise CommandError(f"--out {out_dir} is not empty (use --force to write into it)")


def _run_check(path: Path, result: PortResult, offload_arch: str, no_progress: bool) -> None:
    options = CheckOptions(offload_arch=offload_arch)
    missing = [name for name in ("nvcc", "hipcc") if shutil.which(name) is None]
    if missing:
        say(
            f"note: {' and '.join(missing)} not found on PATH: "
            "those compilations are reported as not compiled"
        )
    hip = hipcc_version(options.hipcc)
    target = parse_version(result.rocm_version)
    if hip is not None and hip < target[:2]:
        differences = version_facts().between(parse_version(f"{hip[0]}.{hip[1]}"), target)
        newer = ", ".join(f"{d.id} (ROCm {version_text(d.since)}+)" for d in differences)
        older = (
            f"hipcc here is HIP {hip[0]}.{hip[1]}, older than the target ROCm "
            f"{result.rocm_version}: names that came later do not compile with it"
            + (f", nor the rewrites made for the newer release: {newer}" if newer else "")
            + f" (--rocm-version {hip[0]}.{hip[1]} checks against this compiler)"
        )
        say(f"note: {older}")
        result.notes.append(older)
    with Progress(enabled=not no_progress, label="compiling") as progress:
        result.checks = check_project(
            path, result, options, lambda done, total: progress.update(done)
        )


def port_exit_code(result: PortResult) -> ExitCode:
    """0 all converted, 1 something unconverted or a translation that fails to compile,
    2 input problems or internal errors."""
    if result.problems or any(f.skipped for f in result.files):
        return ExitCode.ERROR
    unconverted = any(f.count(ChangeStatus.UNCONVERTED) for f in result.files)
    broken = any(c.status is CheckStatus.TRANSLATION_FAILS for c in result.checks)
    return ExitCode.FINDINGS if unconverted or broken else ExitCode.CLEAN
