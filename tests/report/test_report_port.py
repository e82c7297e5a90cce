"""The port summary renderers on a hand-made PortResult: markdown code spans and valid SARIF."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema

from gpuport.port.model import Change, ChangeStatus, FileResult, PortResult
from gpuport.report import Format, RenderOptions, render

SCHEMA = Path(__file__).parents[1] / "data" / "sarif-schema-2.1.0.json"
LONG_PATH = "a_long_directory_name_" * 6 + "/ünïcödé dir & <tags>/kérnel|pipe|😀.sh"


def _result(before: str) -> PortResult:
    change = Change(
        line=3,
        column=1,
        family="container-env",
        before=before,
        after=before,
        status=ChangeStatus.UNCONVERTED,
        note="set the AMD variable by hand",
        rule_id="GP402",
    )
    original = f"#!/bin/sh\n\n{before}\n"
    file = FileResult(
        path=LONG_PATH,
        new_path=LONG_PATH,
        kind="shell",
        original=original,
        translated=original,
        changes=[change],
    )
    return PortResult(root="proj", rocm_version="6.4", files=[file])


def test_markdown_code_span_survives_runs_of_backticks() -> None:
    before = "echo ``$(nvidia-smi)`` `x`"
    text = render(_result(before), Format.MARKDOWN, RenderOptions())
    # The span's delimiter is longer than the longest run inside it, so the whole snippet
    # stays one code span (a "``" delimiter would be closed by the snippet's own "``").
    assert f"``` {before} ```" in text
    assert "| `` echo" not in text


def test_port_sarif_with_long_unicode_path_validates() -> None:
    document = json.loads(render(_result("NVIDIA_VISIBLE_DEVICES=all"), Format.SARIF))
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    jsonschema.validate(document, schema)
    uri = document["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    assert re.fullmatch(r"[A-Za-z0-9_./%~-]+", uri["artifactLocation"]["uri"])
