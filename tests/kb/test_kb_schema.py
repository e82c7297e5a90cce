"""Every entry of every knowledge-base table is complete, well-formed, sourced and dated."""

from __future__ import annotations

import dataclasses
import datetime
import re
from collections import Counter
from importlib import resources
from typing import Any
from urllib.parse import urlsplit

import pytest
from packaging.version import InvalidVersion, Version

from gpuport import kb
from gpuport.kb.loader import Entry
from kb_checks import OLDEST_CHECK, TODAY, check_known_keys, check_no_stray_whitespace, raw

# Knowledge older than this is due for a re-check; a test failing here is a reminder, not a bug.

MINIMUM_COUNTS = {
    "packages": 70,
    "cuda_libraries": 25,
    "gpu_architectures": 20,
    "env_vars": 10,
    "commands": 8,
    "docker_images": 8,
    "docker_flags": 2,
    "pip_indexes": 5,
}


def all_entries() -> list[tuple[str, Any]]:
    """(label, entry) for every entry of every table, for parametrized checks."""
    entries: list[tuple[str, Any]] = []
    entries += [(f"package {p.name}", p) for p in kb.packages().values()]
    entries += [(f"library {lib.name}", lib) for lib in kb.cuda_libraries().values()]
    entries += [(f"env {v.name}", v) for v in kb.env_vars().values()]
    entries += [(f"command {c.name}", c) for c in kb.commands().values()]
    entries += [(f"image {i.pattern}", i) for i in kb.docker_images()]
    entries += [(f"flag {f.flag}", f) for f in kb.docker_flags()]
    entries += [(f"index {i.pattern}", i) for i in kb.pip_indexes()]
    entries += [(f"notebook {n.name}", n) for n in kb.hosted_notebooks()]
    entries += [(f"gpu {g.gfx}", g) for g in kb.gpu_architectures().values()]
    return entries


ENTRIES = all_entries()
IDS = [label for label, _ in ENTRIES]


def is_web_url(text: str) -> bool:
    parts = urlsplit(text)
    return parts.scheme in ("http", "https") and bool(parts.netloc) and not re.search(r"\s", text)


# --- Counts --------------------------------------------------------------------------------


@pytest.mark.parametrize("table,minimum", sorted(MINIMUM_COUNTS.items()))
def test_table_has_the_required_number_of_entries(table: str, minimum: int) -> None:
    assert len(getattr(kb, table)()) >= minimum


# --- Every entry: sources and dates ----------------------------------------------------------


@pytest.mark.parametrize("entry", [e for _, e in ENTRIES], ids=IDS)
def test_every_entry_has_web_sources(entry: Any) -> None:
    assert entry.sources, "no source"
    bad = [s for s in entry.sources if not is_web_url(s)]
    assert not bad, f"not http(s) URLs: {bad}"
    assert len(set(entry.sources)) == len(entry.sources), "a source is listed twice"


@pytest.mark.parametrize("entry", [e for _, e in ENTRIES], ids=IDS)
def test_every_entry_was_checked_on_a_real_past_date(entry: Any) -> None:
    assert type(entry.checked) is datetime.date
    assert OLDEST_CHECK <= entry.checked <= TODAY


@pytest.mark.parametrize("entry", [e for _, e in ENTRIES], ids=IDS)
def test_text_fields_have_no_stray_whitespace(entry: Any) -> None:
    check_no_stray_whitespace(entry)


# --- Every TOML file of the KB, whatever reads it: each entry has sources and a checked date ----

# Top-level tables that describe the file or hold shared values rather than being an entry.
FILE_TABLES = {"meta", "sources"}


def toml_entries() -> list[tuple[str, dict[str, Any]]]:
    """(label, table) for every entry of every kb/*.toml: each table of an array of tables,
    and each top-level table other than [meta] and [sources]."""
    found: list[tuple[str, dict[str, Any]]] = []
    for path in sorted(resources.files("gpuport.kb").iterdir(), key=lambda p: p.name):
        if not path.name.endswith(".toml"):
            continue
        for key, value in raw(path.name).items():
            if isinstance(value, list) and all(isinstance(item, dict) for item in value):
                found += [(f"{path.name} [[{key}]] #{i + 1}", item) for i, item in enumerate(value)]
            elif isinstance(value, dict) and key not in FILE_TABLES:
                found.append((f"{path.name} [{key}]", value))
    return found


TOML_ENTRIES = toml_entries()


@pytest.mark.parametrize("item", [e for _, e in TOML_ENTRIES], ids=[k for k, _ in TOML_ENTRIES])
def test_every_toml_entry_names_a_source_and_a_checked_date(item: dict[str, Any]) -> None:
    sources = item.get("sources", item.get("source"))
    if isinstance(sources, dict):  # gpus.toml: figure group -> key of its [sources] table
        sources = list(sources.values())
    if isinstance(sources, str):
        sources = [sources]
    assert isinstance(sources, list) and sources, "no source"
    assert all(isinstance(s, str) and s.strip() for s in sources), sources
    assert type(item.get("checked")) is datetime.date, "no `checked = YYYY-MM-DD` date"
    assert OLDEST_CHECK <= item["checked"] <= TODAY


def test_the_toml_entry_walk_sees_every_kind_of_entry() -> None:
    labels = " ".join(label for label, _ in TOML_ENTRIES)
    for expected in ("gpus.toml [[gpu]]", "prices.toml [[price]]", "platform.toml [defaults]"):
        assert expected in labels
    assert "[meta]" not in labels and "[sources]" not in labels


# --- Raw files: no unknown keys (a typo would otherwise be silently ignored) ----------------

TABLE_TYPES = [
    ("packages.toml", "package", kb.Package, {}),
    ("cuda_libraries.toml", "library", kb.CudaLibrary, {}),
    ("platform.toml", "env", kb.EnvVar, {}),
    ("platform.toml", "command", kb.ToolCommand, {}),
    ("platform.toml", "docker_image", kb.DockerImage, {}),
    ("platform.toml", "docker_flag", kb.DockerFlag, {}),
    ("platform.toml", "pip_index", kb.PipIndex, {}),
    ("platform.toml", "hosted_notebook", kb.HostedNotebook, {}),
    ("gpu_arch.toml", "gpu", kb.GpuArch, {}),
]


@pytest.mark.parametrize("filename,table,kind,_", TABLE_TYPES)
def test_data_files_use_only_known_keys(filename: str, table: str, kind: type, _: object) -> None:
    allowed = {f.name for f in dataclasses.fields(kind)}
    items = raw(filename)[table]
    assert items, f"[[{table}]] is empty"
    check_known_keys(f"{filename} [[{table}]]", items, allowed)


def test_data_files_have_no_unknown_top_level_tables() -> None:
    expected = {
        "packages.toml": {"package"},
        "cuda_libraries.toml": {"library"},
        "platform.toml": {
            "defaults",
            "pytorch_rocm",
            "env",
            "command",
            "docker_image",
            "docker_flag",
            "pip_index",
            "hosted_notebook",
        },
        "gpu_arch.toml": {"gpu"},
    }
    for filename, tables in expected.items():
        assert set(raw(filename)) == tables, filename


# --- Packages --------------------------------------------------------------------------------


@pytest.mark.parametrize("package", list(kb.packages().values()), ids=list(kb.packages()))
def test_package_entry_is_complete(package: kb.Package) -> None:
    assert package.name == kb.normalize_name(package.name)
    assert package.category and package.instead
    assert isinstance(package.status, kb.PackageStatus)
    assert package.confidence in {"high", "medium", "low"}
    for module in package.import_names:
        assert all(part.isidentifier() for part in module.split(".")), module
    for extra in package.cuda_extras:
        assert extra == kb.normalize_name(extra), f"extras are normalized: {extra}"
    if package.rocm_package is not None:
        assert package.rocm_package == kb.normalize_name(package.rocm_package)
        assert package.rocm_package != package.name
    if package.rocm_min_version is not None:
        try:
            Version(package.rocm_min_version)
        except InvalidVersion:
            pytest.fail(f"rocm_min_version {package.rocm_min_version!r} is not PEP 440")
    if package.rocm_index is not None:
        assert is_web_url(package.rocm_index.replace("{rocm}", "6.4"))
        if package.rocm_index.startswith("https://download.pytorch.org/whl/"):
            assert "{rocm}" in package.rocm_index, "PyTorch's index depends on the ROCm version"
        # The placeholders are the only braces allowed.
        assert not re.search(r"\{(?!rocm\}|rocm_nodot\})", package.rocm_index)


def test_package_status_says_what_to_do() -> None:
    for package in kb.packages().values():
        if package.status is kb.PackageStatus.NEEDS_ROCM_BUILD:
            # A ROCm build exists: say where (index, replacement) or how (the instructions).
            assert package.rocm_index or package.rocm_package or len(package.instead) > 40
        if package.status is kb.PackageStatus.NOT_APPLICABLE:
            assert package.rocm_index is None


def test_package_names_and_patterns_do_not_collide() -> None:
    for package in kb.packages().values():
        for pattern in package.patterns:
            compiled = re.compile(pattern)
            for other in kb.packages().values():
                if other is not package:
                    assert not compiled.fullmatch(other.name), (
                        f"{package.name}'s pattern {pattern} also matches {other.name}, "
                        "which has an entry of its own"
                    )


def test_import_names_belong_to_one_entry_each() -> None:
    counts = Counter(m for p in kb.packages().values() for m in p.import_names)
    assert [m for m, n in counts.items() if n > 1] == []


# --- CUDA libraries -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "library", list(kb.cuda_libraries().values()), ids=list(kb.cuda_libraries())
)
def test_library_entry_is_complete(library: kb.CudaLibrary) -> None:
    assert library.name and library.amd_counterpart
    assert isinstance(library.status, kb.LibraryStatus)
    assert library.headers or library.link_names, "nothing to recognise the library by"
    for header in (*library.headers, *library.amd_headers):
        assert not header.startswith(("/", "<", '"')), header
    for name in library.link_names:
        assert name == name.lower() and not name.startswith(("lib", "-l")), name
    for target in library.cmake_targets:
        assert " " not in target, target
    if library.status is kb.LibraryStatus.NONE:
        assert not library.amd_cmake_targets
    else:
        assert library.amd_headers or library.amd_link_names or library.amd_cmake_targets


def test_library_names_headers_link_names_and_targets_are_unique() -> None:
    libraries = list(kb.cuda_libraries().values())
    for attribute in ("headers", "link_names", "cmake_targets"):
        keys = [k.lower() for lib in libraries for k in getattr(lib, attribute)]
        duplicated = [k for k, n in Counter(keys).items() if n > 1]
        assert duplicated == [], f"{attribute} listed by two libraries: {duplicated}"


def test_required_cuda_libraries_are_covered() -> None:
    names = " ".join(kb.cuda_libraries()).lower()
    for wanted in (
        "cublas",
        "cublaslt",
        "cudnn",
        "cufft",
        "curand",
        "cusparse",
        "cusolver",
        "cub",
        "thrust",
        "nccl",
        "nvtx",
        "nvrtc",
        "cutlass",
        "tensorrt",
        "cutensor",
        "npp",
        "nvjpeg",
        "cupti",
        "libcu++",
        "cooperative groups",
        "nvshmem",
    ):
        assert wanted in names, wanted


# --- Platform --------------------------------------------------------------------------------


@pytest.mark.parametrize("var", list(kb.env_vars().values()), ids=list(kb.env_vars()))
def test_env_var_entry_is_complete(var: kb.EnvVar) -> None:
    assert re.fullmatch(r"[A-Z][A-Z0-9_]*(_\*)?", var.name), var.name
    assert var.meaning
    # No ROCm counterpart must be explained.
    assert var.rocm_equivalent or var.notes
    for name in var.rocm_names:
        assert re.fullmatch(r"[A-Z][A-Z0-9_]*", name), name


@pytest.mark.parametrize("command", list(kb.commands().values()), ids=list(kb.commands()))
def test_command_entry_is_complete(command: kb.ToolCommand) -> None:
    assert command.name and command.rocm_equivalent
    assert " " not in command.name, "a command name is one executable"
    for name in command.rocm_commands:
        assert " " not in name


def test_command_names_and_aliases_are_unique() -> None:
    names = [n for c in kb.commands().values() for n in (c.name, *c.aliases)]
    assert [n for n, k in Counter(names).items() if k > 1] == []


def test_docker_image_entries_are_complete() -> None:
    patterns = [image.pattern for image in kb.docker_images()]
    assert len(set(patterns)) == len(patterns)
    for image in kb.docker_images():
        assert ":" in image.pattern.rsplit("/", 1)[-1], f"{image.pattern} has no tag part"
        assert image.pattern == image.pattern.lower()
        replacement = image.image_for("6.4")
        assert "{" not in replacement and " " not in replacement, replacement
        assert not image.pattern.startswith("rocm/"), "patterns describe CUDA images"


def test_docker_flag_entries_are_complete() -> None:
    for flag in kb.docker_flags():
        assert flag.flag and flag.rocm_replacement
    gpus = kb.find_docker_flag("--gpus")
    assert gpus is not None
    assert "--device=/dev/kfd" in gpus.rocm_flags and "--device=/dev/dri" in gpus.rocm_flags


def test_pip_index_entries_are_complete() -> None:
    patterns = [index.pattern for index in kb.pip_indexes()]
    assert len(set(patterns)) == len(patterns)
    for index in kb.pip_indexes():
        assert is_web_url(index.pattern.replace("*", "x")), index.pattern
        if index.rocm_replacement is None:
            assert index.notes, "an index with no replacement must say what to do"
            continue
        assert is_web_url(index.rocm_replacement.replace("{rocm}", "6.4"))
        if index.rocm_replacement.startswith("https://download.pytorch.org/whl/"):
            assert "{rocm}" in index.rocm_replacement


def test_defaults_are_known_versions_and_targets_with_sources() -> None:
    """The one default ROCm version and offload targets, read from platform.toml [defaults]."""
    table = raw("platform.toml")["defaults"]
    assert table["sources"] and isinstance(table["checked"], datetime.date)
    assert kb.DEFAULT_ROCM_VERSION in kb.pytorch_rocm_versions()
    known = {arch.lower() for arch in kb.gpu_architectures()}
    assert kb.DEFAULT_OFFLOAD_ARCHS and set(kb.DEFAULT_OFFLOAD_ARCHS) <= known
    assert kb.DEFAULT_CHECK_OFFLOAD_ARCH in kb.DEFAULT_OFFLOAD_ARCHS


def test_pytorch_rocm_versions_are_versions_in_order() -> None:
    versions = kb.pytorch_rocm_versions()
    assert len(versions) >= 5
    keys = [tuple(int(p) for p in v.split(".")) for v in versions]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)
    assert kb.DEFAULT_ROCM_VERSION in versions, "the default must have a published index"
    table = raw("platform.toml")["pytorch_rocm"]
    assert all(is_web_url(s) for s in table["sources"])
    assert table["checked"] <= TODAY


# --- GPU architectures -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "arch", list(kb.gpu_architectures().values()), ids=list(kb.gpu_architectures())
)
def test_gpu_entry_is_complete(arch: kb.GpuArch) -> None:
    assert re.fullmatch(r"gfx[0-9]{2,4}[0-9a-f]", arch.gfx), arch.gfx
    assert arch.family and arch.products and all(arch.products)
    assert arch.wavefront in (32, 64)
    assert arch.wavefronts_supported, "list the wavefront sizes the hardware runs"
    assert set(arch.wavefronts_supported) <= {32, 64}
    assert arch.wavefront in arch.wavefronts_supported
    assert arch.support_note, "say what the support statement rests on"


def test_gpu_wavefront_follows_the_architecture() -> None:
    for arch in kb.gpu_architectures().values():
        if arch.gfx.startswith(("gfx8", "gfx9")):  # GCN and CDNA: wave64 only
            assert arch.wavefront == 64 and arch.wavefronts_supported == (64,), arch.gfx
        else:  # RDNA: wave32 by default, wave64 capable
            assert arch.wavefront == 32 and set(arch.wavefronts_supported) == {32, 64}, arch.gfx


def test_gpu_products_are_unique() -> None:
    products = [p.lower() for a in kb.gpu_architectures().values() for p in a.products]
    assert [p for p, n in Counter(products).items() if n > 1] == []


def test_required_gpu_targets_are_covered() -> None:
    for gfx in (
        "gfx906",
        "gfx908",
        "gfx90a",
        "gfx942",
        "gfx950",
        "gfx1030",
        "gfx1100",
        "gfx1101",
        "gfx1102",
        "gfx1200",
        "gfx1201",
    ):
        assert gfx in kb.gpu_architectures(), gfx


# --- The loader rejects bad data rather than guessing -------------------------------------------


def test_loader_rejects_an_unknown_status() -> None:
    entry = Entry({"status": "fine"}, "test")
    with pytest.raises(kb.KbError, match="not one of"):
        entry.member("status", kb.PackageStatus)


def test_loader_rejects_wrong_types_and_missing_fields() -> None:
    with pytest.raises(kb.KbError, match="missing 'name'"):
        Entry({}, "test").text("name")
    with pytest.raises(kb.KbError, match="wrong type"):
        Entry({"wavefront": "64"}, "test").integer("wavefront")
    with pytest.raises(kb.KbError, match="wrong type"):
        Entry({"wavefront": True}, "test").integer("wavefront")
    with pytest.raises(kb.KbError, match="list of strings"):
        Entry({"sources": ["https://a.example", 3]}, "test").texts("sources")
    with pytest.raises(kb.KbError, match="'checked' has the wrong type"):
        Entry({"checked": "2026-11-21"}, "test").date()
    with pytest.raises(kb.KbError, match="not a date-time"):
        Entry({"checked": datetime.datetime(2026, 11, 21, 12, 0)}, "test").date()
