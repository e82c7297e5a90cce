"""The documentation site builds with `mkdocs build --strict` from pages the code generates,
and references nothing a browser would fetch from the network."""

from __future__ import annotations

import os
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml
from packaging_support import ROOT, run

from gpuport.cli import COMMANDS
from gpuport.kb.query import TABLES
from gpuport.scan.catalog import all_rules

sys.path.insert(0, str(ROOT / "tools"))
import gen_docs_site

# Tags and attributes whose URL a browser loads when it shows the page (links it only follows).
FETCHED = {
    "script": "src",
    "img": "src",
    "iframe": "src",
    "source": "src",
    "audio": "src",
    "video": "src",
    "embed": "src",
    "object": "data",
    "link": "href",
}


class Fetched(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "link" and (found.get("rel") or "") in ("canonical", "alternate"):
            return
        url = found.get(FETCHED.get(tag, ""))
        if url:
            self.urls.append(url)
        style = found.get("style") or ""
        if "url(" in style:
            self.urls.append(style)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("docs")
    pages = base / "pages"
    assert gen_docs_site.write(pages) > len(all_rules())
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    config.update(docs_dir=str(pages), site_dir=str(base / "site"))
    (base / "mkdocs.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(base / "mkdocs.yml")],
        env=env,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    assert "WARNING" not in done.stderr, done.stderr
    return base / "site"


def test_mkdocs_config_is_strict_and_offline() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    assert config["strict"] is True
    assert config["theme"]["name"] == "material" and config["theme"]["font"] is False
    assert config["plugins"] == ["search"]


def test_every_kb_table_is_described() -> None:
    assert set(gen_docs_site.KB_ABOUT) == set(TABLES)


def test_kb_values_render_as_markdown() -> None:
    assert gen_docs_site._value(["https://a.example/x", "https://b.example/y"]).count("<https") == 2
    assert gen_docs_site._value("https://h/whl/rocm{rocm}") == "`https://h/whl/rocm{rocm}`"
    assert gen_docs_site._value("a `b` <i>") == "a \\`b\\` \\<i\\>"
    assert gen_docs_site._code("a `b` c") == "`` a `b` c ``"
    assert gen_docs_site._value(True) == "yes"


def test_one_page_per_rule_command_and_kb_table(site: Path) -> None:
    for rule in all_rules():
        page = (site / "rules" / f"{rule.id}.html").read_text(encoding="utf-8")
        assert rule.slug in page and "Why is this a problem on ROCm?" in page
    index = (site / "rules" / "index.html").read_text(encoding="utf-8")
    assert all(f'href="{r.id}.html"' in index for r in all_rules())
    for command in COMMANDS:
        page = (site / "commands" / f"{command.name}.html").read_text(encoding="utf-8")
        assert f"Usage: gpuport {command.name}" in page
    assert "Usage: gpuport kb list" in (site / "commands" / "kb.html").read_text()
    for table in TABLES:
        assert (site / "knowledge-base" / f"{table}.html").is_file()
    assert "CUDA_VISIBLE_DEVICES" in (site / "knowledge-base" / "env.html").read_text(
        encoding="utf-8"
    )


def test_no_page_loads_anything_from_the_network(site: Path) -> None:
    pages = list(site.rglob("*.html"))
    assert len(pages) > len(all_rules())
    remote: set[str] = set()
    for page in pages:
        parser = Fetched()
        parser.feed(page.read_text(encoding="utf-8"))
        remote |= {(f"{page.name}: {u}") for u in parser.urls if "//" in u}
    assert not remote, sorted(remote)[:10]
    for css in site.rglob("*.css"):
        text = css.read_text(encoding="utf-8")
        assert "url(http" not in text and "@import url(" not in text, css
