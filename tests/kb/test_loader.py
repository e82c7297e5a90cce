"""The one KB loader: typed accessors, and TOML, JSON and TSV readers whose errors name the
file and the entry (or line) that is wrong."""

from __future__ import annotations

import datetime
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from gpuport import kb
from gpuport.kb.loader import (
    Entry,
    KbError,
    data_label,
    entries,
    json_files,
    keyed,
    load_json,
    load_toml,
    load_tsv,
    table_entry,
)

COLUMNS = ("cuda", "hip", "family")


@pytest.fixture
def data_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A throwaway importable package ``gpuport_kb_probe`` to hold data files for the readers."""
    package = tmp_path / "gpuport_kb_probe"
    (package / "docs").mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield package
    sys.modules.pop("gpuport_kb_probe", None)  # the next test's package lives elsewhere


def test_numbers_accept_integers_and_floats_but_not_text_or_booleans() -> None:
    entry = Entry({"whole": 40, "half": 0.5, "text": "1", "yes": True}, "here")
    assert entry.number("whole") == 40.0 and isinstance(entry.number("whole"), float)
    assert entry.number("half") == 0.5
    assert entry.number("absent", 7.0) == 7.0
    assert entry.optional_number("absent") is None
    assert entry.optional_number("half") == 0.5
    with pytest.raises(KbError, match=r"^here: 'text' has the wrong type \(str\)"):
        entry.number("text")
    with pytest.raises(KbError, match=r"^here: 'yes' has the wrong type \(bool\)"):
        entry.optional_number("yes")
    with pytest.raises(KbError, match=r"^here: missing 'absent'"):
        entry.number("absent")


def test_integers_take_a_default_and_refuse_floats() -> None:
    entry = Entry({"links": 7, "ratio": 0.5}, "here")
    assert entry.integer("links") == 7
    assert entry.integer("absent", 1) == 1
    with pytest.raises(KbError, match="'ratio' has the wrong type"):
        entry.integer("ratio")


def test_json_null_reads_as_absent() -> None:
    entry = Entry({"active": None, "name": None}, "preset")
    assert entry.optional_number("active") is None
    assert entry.optional_text("name") is None
    with pytest.raises(KbError, match="missing 'name'"):
        entry.text("name")


def test_sources_must_name_at_least_one() -> None:
    assert Entry({"sources": ["https://a.example"]}, "e").sources() == ("https://a.example",)
    with pytest.raises(KbError, match=r"^e: 'sources' needs at least one source"):
        Entry({"sources": []}, "e").sources()
    with pytest.raises(KbError, match=r"^e: missing 'sources'"):
        Entry({}, "e").sources()


def test_choices_and_enum_members_name_the_allowed_values() -> None:
    entry = Entry({"vendor": "intel", "status": "fine"}, "kb/gpus.toml [[gpu]] x")
    with pytest.raises(KbError, match=r"^kb/gpus.toml \[\[gpu\]\] x: vendor 'intel' is not one of"):
        entry.choice("vendor", ("nvidia", "amd"))
    assert Entry({"vendor": "amd"}, "e").choice("vendor", ("nvidia", "amd")) == "amd"
    with pytest.raises(KbError, match="not one of works-as-is, "):
        entry.member("status", kb.PackageStatus)
    assert Entry({"status": "partial"}, "e").member("status", kb.PackageStatus) is (
        kb.PackageStatus.PARTIAL
    )


def test_nested_tables_are_entries_named_after_their_parent() -> None:
    entry = Entry({"status": {"memory": "seen"}, "sources": {"memory": 3}}, "kb/gpus.toml x")
    assert entry.table("status").where == "kb/gpus.toml x status"
    assert entry.text_table("status") == {"memory": "seen"}
    with pytest.raises(KbError, match=r"^kb/gpus.toml x: 'sources' must be a table of strings"):
        entry.text_table("sources")
    with pytest.raises(KbError, match=r"^kb/gpus.toml x: missing 'config'"):
        entry.table("config")


def test_iso_dates_are_text_dates_and_toml_dates_are_dates() -> None:
    assert Entry({"checked": "2026-11-21"}, "e").iso_date() == datetime.date(2026, 11, 21)
    with pytest.raises(KbError, match=r"^e: 'checked' must be a date like 2026-01-31"):
        Entry({"checked": "last week"}, "e").iso_date()
    with pytest.raises(KbError, match="'checked' has the wrong type"):
        Entry({"checked": datetime.date(2026, 11, 21)}, "e").iso_date()


def test_entries_keyed_and_single_tables_name_file_and_entry() -> None:
    data = {"gpu": [{"id": "a"}, {"id": "a"}], "meta": {"checked": 1}, "bad": {"id": "x"}}
    assert [e.where for e in entries(data, "gpu", "gpus.toml", "id")] == [
        "kb/gpus.toml [[gpu]] a",
        "kb/gpus.toml [[gpu]] a",
    ]
    with pytest.raises(KbError, match=r"^kb/gpus.toml \[\[gpu\]\] a: duplicate GPU id"):
        keyed(data, "gpu", "gpus.toml", "id", "duplicate GPU id", lambda e, name: name)
    with pytest.raises(KbError, match=r"^kb/gpus.toml: \[\[bad\]\] must be an array of tables"):
        entries(data, "bad", "gpus.toml", "id")
    with pytest.raises(KbError, match=r"^kb/gpus.toml \[meta\]: 'checked' has the wrong type"):
        table_entry(data, "meta", "gpus.toml").date()
    with pytest.raises(KbError, match=r"^kb/gpus.toml \[sources\]: expected a table, got NoneType"):
        table_entry(data, "sources", "gpus.toml")


def test_data_labels_name_the_folder_inside_gpuport() -> None:
    assert data_label("gpus.toml") == "kb/gpus.toml"
    assert data_label("presets/phi-4.json", "gpuport.plan") == "plan/presets/phi-4.json"


def test_toml_and_json_errors_name_the_file(data_package: Path) -> None:
    (data_package / "bad.toml").write_text("a = \n", encoding="utf-8")
    (data_package / "docs" / "bad.json").write_text('{\n  "a": 1,\n}\n', encoding="utf-8")
    (data_package / "docs" / "good.json").write_text('{"a": null}', encoding="utf-8")
    (data_package / "docs" / "notes.txt").write_text("not data", encoding="utf-8")
    (data_package / "latin1.toml").write_bytes(b'a = "\xe9"\n')
    with pytest.raises(KbError, match=r"^gpuport_kb_probe/bad.toml: "):
        load_toml("bad.toml", "gpuport_kb_probe")
    with pytest.raises(KbError, match=r"^gpuport_kb_probe/latin1.toml: not UTF-8 text"):
        load_toml("latin1.toml", "gpuport_kb_probe")
    assert json_files("docs", "gpuport_kb_probe") == ("docs/bad.json", "docs/good.json")
    assert load_json("docs/good.json", "gpuport_kb_probe") == {"a": None}
    with pytest.raises(KbError, match=r"^gpuport_kb_probe/docs/bad.json:3: not valid JSON"):
        load_json("docs/bad.json", "gpuport_kb_probe")


def test_tsv_rows_keep_their_line_numbers_and_comment_metadata(data_package: Path) -> None:
    (data_package / "map.tsv").write_text(
        "# source: somewhere\n# source: ignored\n# a plain comment\n"
        "cuda\thip\tfamily\n\ncudaMalloc\thipMalloc\truntime\ncuFoo\t\tdriver\n",
        encoding="utf-8",
    )
    table = load_tsv("map.tsv", COLUMNS, "gpuport_kb_probe")
    assert table.meta == {"source": "somewhere"}
    assert [row.line for row in table.rows] == [6, 7]
    assert table.rows[1].cells == {"cuda": "cuFoo", "hip": "", "family": "driver"}
    assert table.where(table.rows[1]) == "gpuport_kb_probe/map.tsv:7"


def test_tsv_errors_name_the_line(data_package: Path) -> None:
    (data_package / "short.tsv").write_text("cuda\thip\tfamily\na\tb\n", encoding="utf-8")
    (data_package / "header.tsv").write_text("cuda\thip\n", encoding="utf-8")
    with pytest.raises(KbError, match=r"^gpuport_kb_probe/short.tsv:2: 2 cells, expected 3"):
        load_tsv("short.tsv", COLUMNS, "gpuport_kb_probe")
    with pytest.raises(KbError, match=r"^gpuport_kb_probe/header.tsv:1: the header row must be"):
        load_tsv("header.tsv", COLUMNS, "gpuport_kb_probe")


def test_the_port_api_map_names_the_malformed_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    """port/apimap.py reads kb/cuda_hip_extra.toml through the loader: a header with a
    counterpart but no version is refused with the file and the entry named."""
    from gpuport.kb import loader
    from gpuport.port import apimap

    extra = load_toml(apimap.EXTRA_TOML)
    extra["header"] = [{**extra["header"][0]}, *extra["header"][1:]]
    del extra["header"][0]["since"]
    monkeypatch.setattr(loader, "load_toml", lambda filename: extra)
    apimap.load_api_map.cache_clear()
    try:
        with pytest.raises(
            KbError,
            match=r"^kb/cuda_hip_extra.toml \[\[header\]\] cuda_runtime.h: "
            "a header with a counterpart needs `since`",
        ):
            apimap.load_api_map()
    finally:
        apimap.load_api_map.cache_clear()


def test_a_toml_file_read_twice_gives_two_documents_and_a_changed_file_is_read_anew(
    data_package: Path,
) -> None:
    (data_package / "twice.toml").write_text("[a]\nlist = [1, 2]\nwhen = 2026-01-02\n", "utf-8")
    first = load_toml("twice.toml", "gpuport_kb_probe")
    first["a"]["list"].append(3)  # a caller may change its document
    second = load_toml("twice.toml", "gpuport_kb_probe")
    assert second == {"a": {"list": [1, 2], "when": datetime.date(2026, 1, 2)}}
    (data_package / "twice.toml").write_text("[a]\nlist = [9]\n", "utf-8")
    assert load_toml("twice.toml", "gpuport_kb_probe") == {"a": {"list": [9]}}
    (data_package / "twice.toml").write_text("[a\n", "utf-8")
    with pytest.raises(KbError, match=r"twice\.toml"):
        load_toml("twice.toml", "gpuport_kb_probe")
