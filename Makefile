# gpuport developer commands. `make demo` and `make test` are the README's quick start.
.PHONY: demo test setup setup-test lint typecheck unit bench goldens docs clean
VENV := .venv/bin

demo: setup
	$(VENV)/gpuport assess examples/llm-service --fail-on never

test: setup-test lint typecheck unit

setup:
	@scripts/setup.sh

setup-test:
	@scripts/setup.sh --test

lint:
	$(VENV)/ruff check src tests benchmarks tools
	$(VENV)/ruff format --check src tests benchmarks tools

typecheck:
	$(VENV)/mypy

unit:
	$(VENV)/pytest -q -n 2 --dist loadgroup

bench: setup
	$(VENV)/python benchmarks/scan_speed.py
	$(VENV)/python benchmarks/port_speed.py

goldens: setup-test
	$(VENV)/pytest -q tests/report --update-goldens

# The documentation site: pages generated from the code into build/docs-site, the site into
# build/site (open build/site/index.html; no server or network needed).
docs: setup-test
	$(VENV)/python tools/gen_docs_site.py --out build/docs-site
	NO_MKDOCS_2_WARNING=1 $(VENV)/mkdocs build --strict

clean:
	rm -rf .venv build dist src/*.egg-info gpuport-report.html
